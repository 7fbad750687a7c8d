#!/usr/bin/env python3
"""Reads meson's testlog.json files and prints the closing line CI reads:
'N passed, N failed, N skipped', one line for all of them. Exits 1 when
anything failed, a log is missing (its build failed) or nothing ran.

    summary.py LOG [--prefix=P LOG]...

--prefix=P puts P before the names of the following logs' tests
(scripts/test.sh passes --prefix=asan/ for the sanitizer run). A skipped test is never counted
as passed; each skip is listed with its reason (the last line it printed),
each failure with its verdict lines (those saying FAIL, which tests/lib
prints) and the last lines it printed: a daemon's log printed after the
verdict must not push the verdict out of sight."""
import json
import sys

TAIL = 15  # lines of a failed test's output printed at the end
VERDICTS = 5  # at most this many earlier lines saying FAIL, printed first
passed = failed = skipped = 0
skips, fails = [], []
prefix = ""
for arg in sys.argv[1:]:
    if arg.startswith("--prefix="):
        prefix = arg[len("--prefix="):]
        continue
    try:
        f = open(arg, encoding="utf-8")
    except OSError as e:
        failed += 1
        fails.append((f"{prefix}{arg}", f"no test log: {e.strerror}", []))
        continue
    with f:
        for line in f:
            if not line.strip():
                continue
            t = json.loads(line)
            name = prefix + t["name"]
            r = t.get("result")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
                out = (t.get("stdout") or "").strip().splitlines()
                skips.append((name, out[-1] if out else ""))
            else:
                failed += 1
                out = ((t.get("stdout") or "") + "\n" + (t.get("stderr") or "")).strip()
                lines = out.splitlines()
                tail = lines[-TAIL:]
                early = [x for x in lines[:-TAIL] if "FAIL" in x][:VERDICTS]
                fails.append((name, r, early + tail))
for name, why in skips:
    print(f"skipped: {name}: {why}")
for name, r, tail in fails:
    # The last lines each failed test printed, here beside the verdict: a
    # CI log is often read only at its end.
    for line in tail:
        print(f"  {name} | {line[:300]}")
for name, r, _ in fails:
    print(f"failed: {name} ({r})")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
