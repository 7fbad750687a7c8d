#!/bin/bash
# run-notes.sh SECONDS [WORKDIR]: the ELF/note reader fuzz target
# (fuzz-notes.c: hd_elf_note_kinds, usdt_notes_read, the metadata note
# readers), built by meson with -Dfuzz=enabled (clang
# -fsanitize=fuzzer,address,undefined; targets.sh's fuzz_binary), run for
# SECONDS on a copy of corpus-notes/ (never modified). Exit 0 when no crash,
# leak or timeout was found; crash inputs are left in WORKDIR (a temporary
# directory, removed on success, unless given).
set -eu
secs=${1:?usage: run-notes.sh SECONDS [WORKDIR]}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/targets.sh"
fuzz_run notes "$secs" "${2:-}" -max_len=65536 -dict="$here/notes.dict"
