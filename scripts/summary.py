#!/usr/bin/env python3
"""Reads meson's testlog.json and prints the closing line CI reads:
'N passed, N failed, N skipped'. Exits 1 when anything failed or nothing ran.
A skipped test is never counted as passed; each skip is listed with its reason
(the last line the test printed)."""
import json
import sys

path = sys.argv[1]
passed = failed = skipped = 0
skips, fails = [], []
with open(path, encoding="utf-8") as f:
    for line in f:
        if not line.strip():
            continue
        t = json.loads(line)
        r = t.get("result")
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
            out = (t.get("stdout") or "").strip().splitlines()
            skips.append((t["name"], out[-1] if out else ""))
        else:
            failed += 1
            fails.append((t["name"], r))
for name, why in skips:
    print(f"skipped: {name}: {why}")
for name, r in fails:
    print(f"failed: {name} ({r})")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
