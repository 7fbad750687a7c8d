#!/bin/bash
# Every C source and header that git tracks follows .clang-format (the
# Linux-kernel style libbpf uses), as clang-format 14 (Debian 12) applies it:
# `clang-format -i FILE` is the fix. The list comes from `git ls-files`, so a
# new directory is covered the day it is added. Left out, each for a reason:
#   include/sys/sdt.h     its hand-aligned macro tables (the STAP_PROBE
#                         argument lists, twelve levels deep) are clearer as
#                         laid out, and it is a public header users read;
#   tests/dropin/*style/  stand-ins for other projects' own headers (CPython's,
#                         Erlang's, GLib's), kept in those projects' layout
#                         because the drop-in tests compile code shaped as
#                         theirs is.
# A region a test needs laid out by hand (asm operand text clang-format would
# split) is fenced with /* clang-format off */ and /* clang-format on */.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
command -v clang-format >/dev/null || fail "clang-format is not installed (scripts/deps.sh installs it)"
cd "$USDTKIT_SRCDIR" || fail "no source directory"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	skip "not a git checkout: the files to check are the ones git tracks"
git ls-files -z -- '*.c' '*.h' >"$T/files" || fail "git ls-files failed"
n=0 bad=0 left=0
while IFS= read -r -d '' f; do
	case $f in
	include/sys/sdt.h | tests/dropin/*style/*)
		left=$((left + 1))
		continue
		;;
	esac
	[ -f "$f" ] || continue # deleted in the work tree, not yet committed
	n=$((n + 1))
	if ! clang-format --dry-run -Werror "$f" 2>"$T/err"; then
		head -5 "$T/err" >&2
		bad=$((bad + 1))
	fi
done <"$T/files"
[ "$n" -gt 150 ] || fail "only $n files found: git ls-files gave too few"
[ "$bad" -eq 0 ] || fail "$bad of $n files do not follow .clang-format (fix: clang-format -i FILE)"
echo "ok: $n files follow .clang-format ($left left out, as the head of this test says)"
