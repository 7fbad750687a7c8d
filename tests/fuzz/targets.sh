# shellcheck shell=bash
# shellcheck disable=SC2154 # $here: set by the sourcing script
# targets.sh: sourced by run-<target>.sh and coverage-<target>.sh (not the
# parser's, which predate it). What each fuzz target compiles, how it is built
# outside meson, and how it is run. The sourcing script sets $here (this
# directory) first.
top=$(cd "$here/../.." && pwd)
kh="$top/kernel-helper"
pc="$top/provider-compiler"
dg="$top/dtrace-G"
co="$top/core"
FUZZ_CFLAGS="-g -std=c11 -D_GNU_SOURCE -I$top/core -I$kh/lib -I$kh/helperd -I$kh -I$dg -I$pc"
# The provider model's helpers (stability names) that the metadata reader uses.
provider_srcs="$co/diag.c $pc/lexer.c $pc/strbuf.c $pc/parser.c $pc/parse_stream.c"
provider_srcs="$provider_srcs $pc/parse_directive.c $pc/parse_decl.c $pc/parse_provider.c"
provider_srcs="$provider_srcs $pc/parse_merge.c $pc/types.c $co/model.c $pc/spelling.c"

# target_sources TARGET: the harness and the code under test, and libraries.
target_sources() {
	case $1 in
	notes)
		echo "$here/fuzz-notes.c $co/notes.c $co/argspec.c"
		echo "$co/names.c $kh/helperd/proc.c $co/maps.c $co/metadata.c"
		echo "$provider_srcs -lelf"
		;;
	protocol)
		# drti.c is #included by the harness (its functions are static).
		echo "$here/fuzz-protocol.c $kh/helperd/msg.c $dg/list_source.c $co/maps.c $provider_srcs"
		echo "-lpthread"
		;;
	worker)
		# worker.c is #included by the harness (decode() is static).
		echo "$here/fuzz-worker.c $co/notes.c $co/argspec.c $co/names.c"
		echo "$kh/lib/tracefs.c $co/metadata.c $co/maps.c $provider_srcs -lelf -lseccomp"
		;;
	*)
		echo "unknown fuzz target $1" >&2
		return 1
		;;
	esac
}

# target_files TARGET: the files whose coverage is reported.
target_files() {
	case $1 in
	notes)
		echo "$co/notes.c $co/argspec.c $co/names.c $kh/helperd/proc.c $co/maps.c"
		echo "$co/metadata.c"
		;;
	protocol) echo "$kh/helperd/msg.c $kh/drti/drti.c $dg/list_source.c" ;;
	worker) echo "$kh/helperd/worker.c $kh/lib/tracefs.c" ;;
	esac
}

# fuzz_build TARGET OUT [EXTRA CFLAGS...]: the libFuzzer binary.
fuzz_build() {
	local t=$1 out=$2
	shift 2
	# shellcheck disable=SC2046
	"${FUZZ_CC:-clang}" $FUZZ_CFLAGS "$@" $(target_sources "$t") -o "$out"
}

# fuzz_run TARGET SECONDS WORKDIR [LIBFUZZER OPTIONS...]: one worker, bounded.
fuzz_run() {
	local t=$1 secs=$2 work=$3 keep=1 rc=0
	shift 3
	if [ -z "$work" ]; then
		work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-fuzz-$t.XXXXXX")
		keep=0
	fi
	mkdir -p "$work/corpus"
	command -v "${FUZZ_CC:-clang}" >/dev/null || { echo "SKIP: ${FUZZ_CC:-clang} not installed"; exit 77; }
	fuzz_build "$t" "$work/fuzz-$t" -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined
	cp -n "$here/corpus-$t"/* "$work/corpus/" 2>/dev/null || true
	# The drti code runs a constructor: keep it from talking to a real daemon.
	USDTKIT_DISABLE=1 "$work/fuzz-$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/" "$@" "$work/corpus" \
		>"$work/log" 2>&1 || rc=$?
	grep -E '^(#[0-9]+.*(DONE|pulse)|stat::)' "$work/log" | tail -8 || true
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
	local t=$1 work
	shift
	work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-fuzzcov-$t.XXXXXX")
	# FUZZ_COV_KEEP=1: keep the binary and profile (llvm-cov show) and say where.
	if [ "${FUZZ_COV_KEEP:-0}" = 1 ]; then
		echo "coverage data kept in $work"
	else
		# shellcheck disable=SC2064
		trap "rm -rf '$work'" EXIT
	fi
	fuzz_build "$t" "$work/cov" -O0 -fsanitize=fuzzer -fprofile-instr-generate \
		-fcoverage-mapping
	# -runs=0: execute every corpus input once, no fuzzing.
	USDTKIT_DISABLE=1 LLVM_PROFILE_FILE="$work/cov.profraw" "$work/cov" -runs=0 "$@" \
		>"$work/log" 2>&1
	llvm-profdata merge -sparse "$work/cov.profraw" -o "$work/cov.profdata"
	# shellcheck disable=SC2046
	llvm-cov report "$work/cov" -instr-profile="$work/cov.profdata" $(target_files "$t")
	# Per function: these files hold more than the readers under test.
	case $t in
	protocol) fns='usdt_drti_read_reply|usdt_drti_report|usdt_drti_put|usdt_list_daemon_modules|recv_packet|header_ok|list_entry|open_mapping|add_module|have_module|push_module|usdt_list_modules_free|hd_msg_decode' ;;
	worker) fns='decode|get|get32|get64|get_str|get_fixed|get_probe|site_is_nop|usdt_uprobe_def|usdt_uprobe_parse_line|fetch_arg|put_arg' ;;
	notes) fns='hd_elf_note_kinds|shdr_fields|read_at|usdt_meta_open|usdt_meta_provider|usdt_meta_probe|usdt_meta_arg|usdt_meta_dump|dump_arg|check_arg|check_probe|check_provider|str_ok|str_at|ident_ok|table_ok|attr_ok|word_at|usdt_site_set_arg_hint|usdt_tracefs_name|usdt_is_identifier|fnv1a' ;;
	*) return 0 ;;
	esac
	# shellcheck disable=SC2046
	llvm-cov report -show-functions "$work/cov" -instr-profile="$work/cov.profdata" \
		$(target_files "$t") | grep -E "^(Name|([a-z_-]+\.c:)?($fns)) "
}
