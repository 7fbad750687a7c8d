#!/bin/bash
# run-parser.sh SECONDS [WORKDIR]: builds the usdt_parse() fuzz target with
# clang (-fsanitize=fuzzer,address,undefined), outside meson, and runs it for
# SECONDS on a copy of the seed corpus: the provider test cases
# (tests/provider/cases/*.d) and corpus-parser/ (inputs found by fuzzing);
# neither is ever modified.
# Exit 0 when no crash, leak or timeout was found; crash inputs are left in
# WORKDIR (a temporary directory, removed on success, unless given).
set -eu
secs=${1:?usage: run-parser.sh SECONDS [WORKDIR]}
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../../provider-compiler"
work=${2:-}
keep=1
if [ -z "$work" ]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-fuzz.XXXXXX")
	keep=0
fi
mkdir -p "$work/corpus"
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "SKIP: $CC not installed"; exit 77; }
"$CC" -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$src" -I"$src/../core" \
	"$src/../core/diag.c" "$src/lexer.c" "$src/strbuf.c" "$src/parser.c" "$src/parse_stream.c" \
	"$src/parse_directive.c" "$src/parse_decl.c" "$src/parse_provider.c" "$src/parse_merge.c" \
	"$src/types.c" "$src/../core/model.c" "$src/spelling.c" "$here/fuzz-parser.c" -o "$work/fuzz-parser"
cp -n "$here"/corpus-parser/* "$here"/../provider/cases/*.d "$work/corpus/" 2>/dev/null || true
rc=0
# One worker: the machine is shared. -timeout catches quadratic blow-ups.
"$work/fuzz-parser" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
	-print_final_stats=1 -dict="$here/parser.dict" -artifact_prefix="$work/" \
	"$work/corpus" \
	>"$work/log" 2>&1 || rc=$?
grep -E '^(#[0-9]+.*(DONE|pulse)|stat::|cov:)' "$work/log" | tail -8 || true
grep -E 'cov: [0-9]+' "$work/log" | tail -1 || true
if [ "$rc" -ne 0 ]; then
	tail -60 "$work/log" >&2
	echo "FAIL: fuzzer exit $rc; artifacts in $work" >&2
	exit 1
fi
[ "$keep" -eq 1 ] || rm -rf "$work"
exit 0
