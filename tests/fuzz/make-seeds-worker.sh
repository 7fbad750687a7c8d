#!/bin/bash
# make-seeds-worker.sh: regenerates the seed-* files of corpus-worker/: the
# real answer streams of the daemon's worker (helperd/worker.c child(), run in
# a forked process under its seccomp sandbox) for every ELF seed of
# corpus-notes/ (x86-64, i386, aarch64; stapsdt only, with metadata) and for
# a few of those mutated into errors (not ELF, unsupported machine).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/targets.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-seeds-worker.XXXXXX")
trap 'rm -rf "$work"' EXIT
out="$here/corpus-worker"
mkdir -p "$out"
rm -f "$out"/seed-*
fuzz_binary worker # (meson builds seedgen-worker beside it)
seedgen="$FUZZ_DIR/tests/fuzz/seedgen-worker"
[ -x "$seedgen" ] || ninja -C "$FUZZ_DIR" tests/fuzz/seedgen-worker >&2
printf 'not an ELF file\n' >"$work/not-elf"
cp "$here/corpus-notes/seed-G-object.o" "$work/et-rel.o"
"$seedgen" "$out" "$work/not-elf" "$work/et-rel.o" \
	"$here"/corpus-notes/seed-stap* "$here"/corpus-notes/seed-ours* "$here"/corpus-notes/seed-G-*-app \
	"$here"/corpus-notes/seed-G-*.so "$here"/corpus-notes/seed-be-*
ls -l "$out" | awk '{ s += $5 } END { print NR - 1 " seeds, " s " bytes" }'
