#!/bin/bash
# Every C source and header of the product follows .clang-format (the
# Linux-kernel style libbpf uses), as clang-format 14 (Debian 12) applies it:
# `clang-format -i FILE` is the fix. include/sys/sdt.h is left out: its
# hand-aligned macro tables (the STAP_PROBE argument lists, twelve levels
# deep) are clearer as laid out, and it is a public header users read.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
command -v clang-format >/dev/null || fail "clang-format is not installed (scripts/deps.sh installs it)"
cd "$USDTKIT_SRCDIR" || fail "no source directory"
n=0 bad=0
while IFS= read -r f; do
	n=$((n + 1))
	if ! clang-format --dry-run -Werror "$f" 2>"$T/err"; then
		head -5 "$T/err" >&2
		bad=$((bad + 1))
	fi
done < <(find core provider-compiler dtrace-G dtrace kernel-helper -name '*.[ch]' | sort)
[ "$n" -gt 40 ] || fail "only $n files found: the list of directories is stale"
[ "$bad" -eq 0 ] || fail "$bad of $n files do not follow .clang-format (fix: clang-format -i FILE)"
echo "ok: $n files follow .clang-format"
