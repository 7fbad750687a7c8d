#!/usr/bin/env python3
"""DTrace's own D unit tests as usdtkit's conformance suite (issue 35).

Oracle's DTrace for Linux (github.com/oracle/dtrace-utils, branch devel)
ships its D unit tests under test/unittest/: each tst.*.d a program with its
expected output in tst.*.r, each err.*.d a program that must be refused
(err.D_TAG.*.d: refused with the tag [D_TAG] under -xerrtags). Its runtest.sh
runs them; this runs the ones that are pure D the way runtest.sh does, with
usdtkit's dtrace, and compares:

  - the program: `dtrace [-xerrtags] -DARCH_x86_64 -s TEST [@@runtest-opts]`
    from the checkout's top, with _DTRACE_TESTING=t and LANGUAGE=C in the
    environment, under the test's @@timeout (41 s by default, runtest.sh's);
    a test's @@options are its own, else its directory's test.options (or a
    parent's), as runtest.sh reads them (preprocessor/'s -C);
  - its output: standard output, then "-- @@stderr --" and standard error
    when there is any; through the test's .r.p filter when it has an
    executable one (on its standard input, no argument; its failure fails
    the test); then 0x... turned into {ptr} (runtest.sh's postprocess);
    compared with TEST.ARCH.r or TEST.r, both sorted unless @@nosort;
  - its exit: 0 for tst, 1 for err; the tag for err.D_*.

Pure D: a tst or err test run by dtrace alone (no .sh or .c of its own, no
trigger program, no .t), not @@skip, whose probe descriptions are all BEGIN,
END, ERROR, tick-* or profile-*.

    oracle.py CHECKOUT [--dtrace PATH] [-j N] [--only PATTERN] [--list FILE]
              [--write-lists DIR] [--results FILE]

--list FILE (tests/conformance/expected-pass.txt) names the tests expected
to pass; any of them that fails makes the exit status 1. --write-lists DIR
writes expected-pass.txt and known-fail.txt (each failing test with its
reason) from this run. DTRACE_ARGS in the environment adds options before
the test's (for example "-x engine=bpf").
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys

ALLOWED = re.compile(r"^(?::*)(BEGIN|END|ERROR|tick-[0-9a-z]+|profile-[0-9a-z]+)$")
DEFAULT_TIMEOUT = 41
ARCH = os.uname().machine


def option_texts(checkout, rel, text):
    """Where runtest.sh looks for a test's @@options: the test, then the
    test.options (test.ARCH.options) of its directory and of each directory
    above it, up to the checkout's top."""
    texts = [text]
    d = os.path.dirname(rel)
    while d:
        for name in ("test.%s.options" % ARCH, "test.options"):
            f = os.path.join(checkout, d, name)
            if os.path.exists(f):
                with open(f, encoding="utf-8", errors="replace") as fh:
                    texts.append(fh.read())
                break
        d = os.path.dirname(d)
    return texts


def options(texts, name):
    """runtest.sh's @@NAME options: the values after '@@NAME:' or '@@NAME '
    in the first of texts (option_texts()) that has any."""
    for text in texts:
        vals = []
        for m in re.finditer(r"@@" + re.escape(name) + r"(?: *: *| +|$)(.*)$", text, re.M):
            vals.append(m.group(1).replace("*/", "").strip())
        if vals:
            return vals
    return []


def has_option(texts, name):
    return any(re.search(r"@@" + re.escape(name) + r"( *:| |$)", t, re.M) for t in texts)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    return re.sub(r"^\s*#[^\n]*", " ", text, flags=re.M)


def descriptions(text):
    """The probe descriptions of the clauses: the top-level text before each
    '{' that does not open a declaration, its predicate taken out."""
    code = strip_comments(text)
    descs, depth, start = [], 0, 0
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                head = code[start:i]
                head = head.rsplit(";", 1)[-1]
                head = re.sub(r"/[^/]*/\s*$", "", head.strip()).strip()
                if head and not re.match(r"^(struct|union|enum|typedef|inline|translator)\b", head):
                    descs.extend(d.strip() for d in head.split(",") if d.strip())
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
    return descs


def xfile_says_skip(checkout, base):
    """runtest.sh's .x files: exit 2 means 'unreliable here, skip'."""
    for x in (base + "." + ARCH + ".x", base + ".x"):
        if os.access(x, os.X_OK):
            r = subprocess.run([x], capture_output=True, cwd=checkout)
            if r.returncode == 2:
                return True
    return False


def select(checkout):
    tests = []
    top = os.path.join(checkout, "test", "unittest")
    for root, _, files in os.walk(top):
        for f in sorted(files):
            if not re.match(r"^(tst|err)\..*\.d$", f):
                continue
            path = os.path.join(root, f)
            base = path[:-2]
            rel = os.path.relpath(path, checkout)
            if os.access(base + ".sh", os.X_OK) or os.path.exists(base + ".c"):
                continue
            if os.access(base + ".t", os.X_OK):
                continue
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if text.startswith("#!"):
                continue
            opts = option_texts(checkout, rel, text)
            if has_option(opts, "skip"):
                continue
            if xfile_says_skip(checkout, base):
                continue
            trig = options(opts, "trigger")
            if trig and trig[0] != "none":
                continue
            descs = descriptions(text)
            if not descs or not all(ALLOWED.match(d) for d in descs):
                continue
            tests.append((rel, text))
    return sorted(tests)


def postprocess(checkout, base, out):
    """runtest.sh's postprocess(): the .r.p filter with the output on its
    standard input and no argument (a gawk -f filter would read an argument
    as a file), then {ptr}. None when the filter fails (runtest.sh's
    "results postprocessor failed": the test fails)."""
    pp = os.path.join(checkout, base + ".r.p")
    if os.access(pp, os.X_OK):
        r = subprocess.run([pp], input=out, capture_output=True, text=True, cwd=checkout,
                           errors="replace")
        if r.returncode != 0:
            return None
        out = r.stdout
    out = re.sub(r"0x[0-9a-f]+", "{ptr}", out)
    return re.sub(r"at BPF pc [1-9][0-9]*", "at BPF pc NNN", out)


def run_one(checkout, dtrace, extra, rel, text):
    name = os.path.basename(rel)
    base = rel[:-2]
    is_err = name.startswith("err.")
    tag = None
    args = [dtrace] + extra
    if name.startswith("err.D_"):
        args.append("-xerrtags")
        tag = re.sub(r"\..*$", "", name[len("err."):])
    args += ["-DARCH_" + ARCH, "-s", rel]
    opts = option_texts(checkout, rel, text)
    for o in options(opts, "runtest-opts"):
        args += shlex.split(o)
    timeout = DEFAULT_TIMEOUT
    for t in options(opts, "timeout"):
        if t.isdigit() and int(t) > timeout:
            timeout = int(t)
    env = dict(os.environ, _DTRACE_TESTING="t", LANGUAGE="C", LC_ALL="C")
    try:
        p = subprocess.run(args, capture_output=True, text=True, errors="replace",
                           cwd=checkout, env=env, timeout=timeout, stdin=subprocess.DEVNULL)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = "timed out", None
    full = out + ("-- @@stderr --\n" + err if err else "")
    got = postprocess(checkout, base, full)
    rfile = os.path.join(checkout, base + "." + ARCH + ".r")
    if not os.path.exists(rfile):
        rfile = os.path.join(checkout, base + ".r")
    same = None
    if got is None:
        got, same = "", False
    elif os.path.exists(rfile):
        with open(rfile, encoding="utf-8", errors="replace") as fh:
            want = fh.read()
        if has_option(opts, "nosort"):
            same = want.splitlines() == got.splitlines()
        else:
            same = sorted(want.splitlines()) == sorted(got.splitlines())
    lines = [ln for ln in err.splitlines() if ln.strip()]
    first_err = next((ln for ln in lines if "error" in ln), lines[0] if lines else "")
    if rc is None:
        return rel, "fail", "timed out after %d s" % timeout, None
    if is_err:
        if rc != 1:
            return rel, "fail", "accepted: exit %d, expected 1 (refused)" % rc, None
        tagged = tag is None or ("[%s]" % tag) in err
        return rel, ("pass" if tagged else "fail"), (
            "" if tagged else "refused without [%s]: %s" % (tag, first_err[:160])), tagged
    if rc != 0:
        return rel, "fail", "exit %d: %s" % (rc, first_err[:160]), None
    if same is False:
        return rel, "fail", "output differs" if got else "results postprocessor failed", None
    return rel, "pass", "", None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("--dtrace", default=os.environ.get("DTRACE", "dtrace"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--list")
    ap.add_argument("--write-lists")
    ap.add_argument("--results")
    a = ap.parse_args()
    checkout = os.path.abspath(a.checkout)
    if not os.path.isdir(os.path.join(checkout, "test", "unittest")):
        sys.exit(f"oracle.py: {a.checkout}: no test/unittest: name a checkout of "
                 "oracle/dtrace-utils (branch devel)")
    dtrace = os.path.abspath(a.dtrace) if os.sep in a.dtrace else a.dtrace
    extra = shlex.split(os.environ.get("DTRACE_ARGS", ""))
    tests = [t for t in select(checkout) if a.only in t[0]]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(a.j) as ex:
        futs = [ex.submit(run_one, checkout, dtrace, extra, rel, text) for rel, text in tests]
        for f in concurrent.futures.as_completed(futs):
            rel, verdict, why, tagged = f.result()
            results[rel] = (verdict, why, tagged)
    per = collections.defaultdict(lambda: [0, 0, 0, 0])  # tst pass, tst all, err pass, err all
    refused = err_all = 0
    for rel, (verdict, why, tagged) in results.items():
        d = rel.split("/")[2]
        k = 0 if os.path.basename(rel).startswith("tst.") else 2
        per[d][k + 1] += 1
        if verdict == "pass":
            per[d][k] += 1
        if k == 2:
            err_all += 1
            if not why.startswith("accepted"):
                refused += 1
    print(f"{'directory':<14} {'tst':>9} {'err':>9}")
    tot = [0, 0, 0, 0]
    for d in sorted(per):
        v = per[d]
        tot = [x + y for x, y in zip(tot, v)]
        print(f"{d:<14} {v[0]:>4}/{v[1]:<4} {v[2]:>4}/{v[3]:<4}")
    print(f"{'all':<14} {tot[0]:>4}/{tot[1]:<4} {tot[2]:>4}/{tot[3]:<4}")
    print(f"tst passed: {tot[0]} of {tot[1]}; err refused: {refused} of {err_all}, "
          f"with the right tag: {tot[2]} of {tot[3]}")
    if a.results:
        with open(a.results, "w", encoding="utf-8") as fh:
            for rel in sorted(results):
                v, why, _ = results[rel]
                fh.write(f"{rel}\t{v}\t{why}\n")
    if a.write_lists:
        with open(os.path.join(a.write_lists, "expected-pass.txt"), "w", encoding="utf-8") as fh:
            for rel in sorted(results):
                if results[rel][0] == "pass":
                    fh.write(rel + "\n")
        with open(os.path.join(a.write_lists, "known-fail.txt"), "w", encoding="utf-8") as fh:
            for rel in sorted(results):
                if results[rel][0] != "pass":
                    fh.write(f"{rel}\t{results[rel][1]}\n")
    rc = 0
    if a.list:
        with open(a.list, encoding="utf-8") as fh:
            expected = [ln.strip() for ln in fh if ln.strip() and not ln.startswith("#")]
        for rel in expected:
            if rel not in results:
                print(f"missing: {rel} (expected to pass, not run)")
                rc = 1
            elif results[rel][0] != "pass":
                print(f"regressed: {rel}: {results[rel][1]}")
                rc = 1
    sys.exit(rc)


if __name__ == "__main__":
    main()
