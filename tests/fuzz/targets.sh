# shellcheck shell=bash
# shellcheck disable=SC2154 # $here: set by the sourcing script
# targets.sh: sourced by run-<target>.sh and coverage-<target>.sh. The
# sourcing script sets $here (this directory) first. The targets are built
# by meson (tests/fuzz/meson.build, -Dfuzz=enabled), from the product's own
# libraries: nothing here lists what they compile.
top=$(cd "$here/../.." && pwd)
kh="$top/kernel-helper"
pc="$top/provider-compiler"
co="$top/core"

# fuzz_binary TARGET [coverage]: sets FUZZ_BIN to the meson-built
# tests/fuzz/fuzz-TARGET. Under `meson test` (USDTKIT_BUILDDIR), that
# build's, which meson built first. Otherwise a build directory of the
# fuzz targets' own, configured (CC=${FUZZ_CC:-clang}) and built as needed:
# $FUZZ_BUILDDIR (default build-fuzz at the top: -Dfuzz=enabled) or, for
# coverage, $FUZZ_COV_BUILDDIR (default build-fuzzcov: -Dfuzz_coverage=true,
# -O0).
fuzz_binary() {
	local t=$1 dir opts=""
	if [ "${2:-}" = coverage ]; then
		dir=${FUZZ_COV_BUILDDIR:-$top/build-fuzzcov}
		opts="-Dfuzz=enabled -Dfuzz_coverage=true -Dbuildtype=debug"
	elif [ -n "${USDTKIT_BUILDDIR:-}" ]; then
		dir=$USDTKIT_BUILDDIR
	else
		dir=${FUZZ_BUILDDIR:-$top/build-fuzz}
		opts="-Dfuzz=enabled"
	fi
	if [ -n "$opts" ]; then
		command -v "${FUZZ_CC:-clang}" >/dev/null || { echo "SKIP: ${FUZZ_CC:-clang} not installed"; exit 77; }
		if [ ! -f "$dir/build.ninja" ]; then
			# shellcheck disable=SC2086
			CC=${FUZZ_CC:-clang} meson setup "$dir" "$top" $opts >&2
		fi
		ninja -C "$dir" "tests/fuzz/fuzz-$t" >&2
	fi
	FUZZ_DIR=$(cd "$dir" && pwd)
	FUZZ_BIN="$FUZZ_DIR/tests/fuzz/fuzz-$t"
	[ -x "$FUZZ_BIN" ] || {
		echo "FAIL: no $FUZZ_BIN (CC=clang meson setup DIR -Dfuzz=enabled builds it)" >&2
		exit 1
	}
}

# target_seeds TARGET: the seed directories and files copied into a run's corpus.
target_seeds() {
	echo "$here/corpus-$1"/*
	# The parser's: the provider test cases too.
	[ "$1" != parser ] || echo "$here"/../provider/cases/*.d
}

# target_files TARGET: the files whose coverage is reported.
target_files() {
	case $1 in
	parser)
		echo "$pc/lexer.c $pc/parser.c $pc/parse_stream.c $pc/parse_directive.c"
		echo "$pc/parse_decl.c $pc/parse_provider.c $pc/parse_merge.c $pc/types.c"
		echo "$pc/strbuf.c $co/model.c $pc/spelling.c"
		;;
	notes)
		echo "$co/notes.c $co/argspec.c $co/names.c $kh/helperd/proc.c $co/maps.c"
		echo "$co/metadata.c"
		;;
	protocol) echo "$kh/helperd/msg.c $kh/drti/drti.c $kh/drti/drti_conn.c $top/dtrace/list/list_source.c" ;;
	worker) echo "$kh/helperd/worker.c $kh/helperd/sandbox.c $kh/lib/uprobe_line.c" ;;
	esac
}

# fuzz_run TARGET SECONDS WORKDIR [LIBFUZZER OPTIONS...]: one worker, bounded.
fuzz_run() {
	local t=$1 secs=$2 work=$3 keep=1 rc=0
	shift 3
	fuzz_binary "$t"
	if [ -z "$work" ]; then
		work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-fuzz-$t.XXXXXX")
		keep=0
	fi
	mkdir -p "$work/corpus"
	# shellcheck disable=SC2046
	cp -n $(target_seeds "$t") "$work/corpus/" 2>/dev/null || true
	# The drti code runs a constructor: keep it from talking to a real daemon.
	# -timeout catches quadratic blow-ups; one worker: the machine is shared.
	USDTKIT_DISABLE=1 "$FUZZ_BIN" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/" "$@" "$work/corpus" \
		>"$work/log" 2>&1 || rc=$?
	grep -E '^(#[0-9]+.*(DONE|pulse)|stat::)' "$work/log" | tail -8 || true
	grep -E 'cov: [0-9]+' "$work/log" | tail -1 || true
	if [ "$rc" -ne 0 ]; then
		tail -60 "$work/log" >&2
		echo "FAIL: fuzzer exit $rc; artifacts in $work" >&2
		exit 1
	fi
	[ "$keep" -eq 1 ] || rm -rf "$work"
	return 0
}

# fuzz_coverage TARGET CORPUS...: llvm-cov's line/branch report for the code under test.
fuzz_coverage() {
	local t=$1 work equiv
	shift
	fuzz_binary "$t" coverage
	work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-fuzzcov-$t.XXXXXX")
	# FUZZ_COV_KEEP=1: keep the profile (llvm-cov show, with $FUZZ_BIN) and say where.
	if [ "${FUZZ_COV_KEEP:-0}" = 1 ]; then
		echo "coverage data kept in $work (binary: $FUZZ_BIN)"
	else
		# shellcheck disable=SC2064
		trap "rm -rf '$work'" EXIT
	fi
	# -runs=0: execute every corpus input once, no fuzzing.
	USDTKIT_DISABLE=1 LLVM_PROFILE_FILE="$work/cov.profraw" "$FUZZ_BIN" -runs=0 "$@" \
		>"$work/log" 2>&1
	llvm-profdata merge -sparse "$work/cov.profraw" -o "$work/cov.profdata"
	# meson compiles by paths relative to the build directory, which the
	# coverage mapping keeps (BUILDDIR/../src/x.c): map them back to the tree.
	equiv="$FUZZ_DIR/$(realpath -m --relative-to="$FUZZ_DIR" "$top"),$top"
	# shellcheck disable=SC2046
	llvm-cov report "$FUZZ_BIN" -instr-profile="$work/cov.profdata" -path-equivalence="$equiv" \
		$(target_files "$t")
	# Per function: these files hold more than the readers under test.
	case $t in
	protocol) fns='usdt_drti_read_reply|usdt_drti_report|usdt_drti_put|usdt_list_daemon_modules|recv_packet|header_ok|list_entry|open_mapping|add_module|have_module|push_module|usdt_list_modules_free|hd_msg_decode' ;;
	worker) fns='hd_worker_decode|get|get32|get64|get_str|get_fixed|get_probe|site_is_nop|usdt_uprobe_def|usdt_uprobe_parse_line|fetch_arg|put_arg' ;;
	notes) fns='hd_elf_note_kinds|shdr_fields|read_at|usdt_meta_open|usdt_meta_provider|usdt_meta_probe|usdt_meta_arg|usdt_meta_dump|dump_arg|check_arg|check_probe|check_provider|str_ok|str_at|ident_ok|table_ok|attr_ok|word_at|usdt_probe_set_arg_hint|usdt_tracefs_name|usdt_is_identifier|fnv1a' ;;
	*) return 0 ;;
	esac
	# shellcheck disable=SC2046
	llvm-cov report -show-functions "$FUZZ_BIN" -instr-profile="$work/cov.profdata" \
		-path-equivalence="$equiv" $(target_files "$t") | grep -E "^(Name|([a-z_-]+\.c:)?($fns)) "
}
