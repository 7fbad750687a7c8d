#!/bin/bash
# coverage-worker.sh CORPUS...: line/branch coverage of the code under test by the
# worker fuzz target's corpus (e.g. WORKDIR/corpus left by run-worker.sh), with clang's
# source-based coverage; prints llvm-cov's report (files: targets.sh).
set -eu
[ $# -ge 1 ] || { echo "usage: coverage-worker.sh CORPUS_DIR..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/targets.sh"
fuzz_coverage worker "$@"
