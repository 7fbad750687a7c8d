#!/bin/bash
# t-case.sh NAME: parses tests/provider/cases/NAME.d (or the files listed in
# NAME.files) with dump-model and compares with the expectations written by
# hand from the .d:
#   NAME.expect  the model (stdout); without NAME.err parsing must succeed
#   NAME.err     the diagnostics (file:line:col: kind: message lines only),
#                and parsing must fail with status 1
. "$USDTKIT_SRCDIR/tests/lib/common.sh"

name=${1:?case name}
cases="$USDTKIT_SRCDIR/tests/provider/cases"
dump="$USDTKIT_BUILDDIR/tests/provider/dump-model"
cd "$cases"
if [ -f "$name.files" ]; then
	read -r -a files <"$name.files"
else
	files=("$name.d")
fi
rc=0
"$dump" "${files[@]}" >"$T/out" 2>"$T/err" || rc=$?
if [ -f "$name.err" ]; then
	[ "$rc" -eq 1 ] || { cat "$T/err" >&2; fail "$name: expected status 1, got $rc"; }
	# Only the message lines: source excerpts and carets follow each one.
	grep -E '^[^ ][^ ]*:[0-9]+(:[0-9]+)?: (error|warning|note): |^[^ ]+: (error|warning): ' \
		"$T/err" >"$T/msgs" || true
	diff -u "$name.err" "$T/msgs" || { cat "$T/err" >&2; fail "$name: diagnostics differ"; }
	# Every diagnostic with a position shows the source line and a caret.
	if grep -q '^[^ ]*:[0-9]*:[0-9]*: error' "$T/err"; then
		grep -q '^ *| *^' "$T/err" || grep -qE '^ +\| +.*\^$' "$T/err" ||
			{ cat "$T/err" >&2; fail "$name: no caret line"; }
	fi
else
	[ "$rc" -eq 0 ] || { cat "$T/err" >&2; fail "$name: expected success, got status $rc"; }
	[ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "$name: unexpected diagnostics"; }
fi
if [ -f "$name.expect" ]; then
	diff -u "$name.expect" "$T/out" || fail "$name: model differs from $name.expect"
fi
echo "ok: $name"
