#!/bin/bash
# coverage-parser.sh CORPUS...: line/branch coverage of the D front end by a
# fuzz corpus (e.g. the WORKDIR/corpus run-parser.sh leaves behind), with
# clang's source-based coverage. Prints llvm-cov's report for the front end.
set -eu
[ $# -ge 1 ] || { echo "usage: coverage-parser.sh CORPUS_DIR..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../../provider-compiler"
work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-fuzzcov.XXXXXX")
trap 'rm -rf "$work"' EXIT
clang -g -O0 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer -fprofile-instr-generate \
	-fcoverage-mapping -I"$src" -I"$src/../core" "$src/../core/diag.c" "$src/lexer.c" "$src/strbuf.c" "$src/parser.c" \
	"$src/parse_stream.c" "$src/parse_directive.c" "$src/parse_decl.c" "$src/parse_provider.c" \
	"$src/parse_merge.c" "$src/types.c" "$src/../core/model.c" "$src/spelling.c" "$here/fuzz-parser.c" -o "$work/cov"
# -runs=0: execute every corpus input once, no fuzzing.
LLVM_PROFILE_FILE="$work/cov.profraw" "$work/cov" -runs=0 "$@" >"$work/log" 2>&1
llvm-profdata merge -sparse "$work/cov.profraw" -o "$work/cov.profdata"
llvm-cov report "$work/cov" -instr-profile="$work/cov.profdata" \
	"$src/lexer.c" "$src/parser.c" "$src/parse_stream.c" "$src/parse_directive.c" \
	"$src/parse_decl.c" "$src/parse_provider.c" "$src/parse_merge.c" "$src/types.c" \
	"$src/strbuf.c" "$src/../core/model.c" "$src/spelling.c"
