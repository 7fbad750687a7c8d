# The real-world suite's helpers (tests/realworld/README.md). Source after
# tests/lib/common.sh, then call rw_project NAME.
#
# A project is built twice from the same Debian source package, with the
# same commands and flags: with SystemTap's tools (systemtap-sdt-dev's
# /usr/bin/dtrace and <sys/sdt.h>) and with usdtkit's (this build's dtrace
# first on PATH, -I<source>/include first on the include path). Everything
# is kept under $USDTKIT_BUILDDIR/realworld (downloads, sources, both builds,
# the results), never in the source tree. The SystemTap build is reused
# while the source package and systemtap-sdt-dev are the same; usdtkit's is
# rebuilt on every run, since it is usdtkit that is under test.
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
need_bpftrace
RW=$USDTKIT_BUILDDIR/realworld
ANALYZE=(python3 "$USDTKIT_SRCDIR/tests/realworld/analyze.py")
# Programs built with -G objects run here without a helper daemon.
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
TOOLS="systemtap usdtkit"
RW_FAILS=0

# A check that fails the test at its end, after the results table has its
# row: the table must show what went wrong, and the other checks still run.
rw_fail() {
	echo "FAIL: $P: $*" >&2
	RW_FAILS=$((RW_FAILS + 1))
}

rw_project() { # NAME
	P=$1
	PW=$RW/$P
	mkdir -p "$PW" "$RW/results"
	RESULTS=$RW/results/$P.tsv
	printf 'what\tSystemTap\tusdtkit\n' >"$RESULTS"
}

# One row of the project's results table (scripts/realworld.sh prints it).
rw_row() { # WHAT SYSTEMTAP USDTKIT
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RESULTS"
}

# The verdict: what was compared (the table's rows, each a check but the
# times, which are measured and shown, never judged), and whether every
# check held.
rw_finish() {
	local what
	what=$(tail -n +2 "$RESULTS" | cut -f1 | grep -v '(median of' | paste -sd ';' | sed 's/;/; /g')
	[ "$RW_FAILS" -eq 0 ] ||
		fail "$P: FAILED: $RW_FAILS check(s) failed (each above, 'FAIL:'). SystemTap's build against" \
			"usdtkit's, compared on: $what. Table: $RESULTS"
	echo "$P: PASSED: SystemTap's build against usdtkit's (same source, commands and flags), every" \
		"check held (usdtkit's equal, or no more warnings) on: $what. Times measured, not judged." \
		"Table: $RESULTS"
}

# Debian packages a project needs to build (its Build-Depends that matter
# for the libraries built here), installed when missing.
rw_need_pkgs() { # PKG...
	local p missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "realworld: installing:$missing" >&2
	# shellcheck disable=SC2086
	flock "$RW/dpkg.lock" apt-get install -y -qq --no-install-recommends $missing >"$T/apt.log" 2>&1 ||
		{ cat "$T/apt.log" >&2; fail "apt-get install$missing"; }
}

# Debian's source packages through a private apt configuration: its own
# sources list (deb-src of the release this machine runs, signed by the
# Debian archive keyring), lists and cache, so the machine's apt
# configuration and state are left as they are. apt checks the Release
# file's signature and, through the Sources index it signs, the hashes of
# the .dsc and of every tarball; dpkg-source then requires a valid OpenPGP
# signature of the .dsc by a Debian developer (debian-keyring).
rw_apt() { # apt-get|apt-cache ARGS...
	local cmd=$1
	shift
	"$cmd" -o Dir::Etc::SourceList="$RW/apt/sources.list" -o Dir::Etc::SourceParts="$RW/apt/none" \
		-o Dir::State::Lists="$RW/apt/lists" -o Dir::Cache="$RW/apt/cache" "$@"
}

rw_apt_setup() {
	local codename
	rw_need_pkgs dpkg-dev debian-archive-keyring debian-keyring gpgv
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	mkdir -p "$RW/apt/lists/partial" "$RW/apt/cache/archives/partial" "$RW/apt/none"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
		"http://deb.debian.org/debian $codename main" >"$RW/apt/sources.list"
	# Refreshed once a day: a point release replaces the sources.
	if [ -z "$(find "$RW/apt/updated" -mmin -1440 2>/dev/null)" ]; then
		rw_apt apt-get -q update >"$T/apt-update.log" 2>&1 ||
			{ cat "$T/apt-update.log" >&2; fail "apt-get update (private source lists)"; }
		touch "$RW/apt/updated"
	fi
}

# Fetches and unpacks a source package once: RW_SRC is its tree (pristine:
# builds copy it or build out of tree), RW_VERSION its version.
#
# With apt-chain, the .dsc's own OpenPGP signature is not required, for an
# upload whose signature dpkg refuses to check (ruby3.1's and erlang's are
# made with SHA-1: "no acceptable signature found"). Nothing unauthenticated is
# unpacked even so: the archive key signs the Release file, apt checks that
# signature and the Sources index's hash in it, and then the SHA-256 of the
# .dsc and of every tarball it downloads against that index (a mismatch
# fails apt-get, an unauthenticated source is refused below); dpkg-source
# -x then checks each tarball against the .dsc's checksums. The uploader's
# signature adds no file apt did not already authenticate, so only it is
# left out (dpkg-source -x still tries it and prints what it found).
rw_fetch() { # SOURCE-PACKAGE [apt-chain]
	local pkg=$1 dl dsc
	exec 8>"$RW/apt.lock"
	flock 8
	rw_apt_setup
	RW_VERSION=$(rw_apt apt-cache showsrc --only-source "$pkg" | sed -n 's/^Version: //p' |
		sort -V | tail -1)
	[ -n "$RW_VERSION" ] || fail "no source package $pkg in the private lists"
	# scripts/realworld.sh --check: this far, the first real step (the
	# private lists updated, the source package found), and no further.
	if [ "${RW_CHECK:-}" = 1 ]; then
		echo "realworld: check: Debian source $pkg $RW_VERSION is available"
		exit 0
	fi
	# (without the version's epoch: make cannot have a ':' in a path)
	RW_SRC=$RW/src/$pkg-${RW_VERSION#*:}
	if [ ! -f "$RW_SRC.ok" ]; then
		dl=$RW/src/download-$pkg
		rm -rf "$dl" "$RW_SRC"
		mkdir -p "$dl"
		(cd "$dl" && rw_apt apt-get -q source --download-only "$pkg=$RW_VERSION") >"$T/src.log" 2>&1 ||
			{ cat "$T/src.log" >&2; fail "apt-get source $pkg=$RW_VERSION"; }
		grep -qi 'unauthenticated\|not be authenticated' "$T/src.log" &&
			{ cat "$T/src.log" >&2; fail "apt-get source $pkg: unauthenticated"; }
		dsc=$(ls "$dl"/*.dsc)
		if [ "${2:-}" = apt-chain ]; then
			dpkg-source -x "$dsc" "$RW_SRC" >"$T/dpkg-source.log" 2>&1
		else
			dpkg-source --require-valid-signature -x "$dsc" "$RW_SRC" >"$T/dpkg-source.log" 2>&1
		fi || { cat "$T/dpkg-source.log" >&2; fail "dpkg-source -x $dsc"; }
		touch "$RW_SRC.ok"
	fi
	exec 8>&-
	if [ "${2:-}" = apt-chain ]; then
		echo "$P: Debian source $pkg $RW_VERSION, hashes verified through the signed Release and Sources"
	else
		echo "$P: Debian source $pkg $RW_VERSION, signature and hashes verified"
	fi
}

# The environment of one tool's build: PATH with its dtrace first, and the
# include option that puts its <sys/sdt.h> first (none for SystemTap's,
# which is the system's).
rw_tool_env() { # TOOL
	case $1 in
	systemtap)
		RW_PATH=/usr/bin:$PATH
		RW_INC=""
		RW_DTRACE=/usr/bin/dtrace
		dpkg -S "$RW_DTRACE" 2>/dev/null | grep -q '^systemtap-sdt-dev' ||
			fail "$RW_DTRACE is not systemtap-sdt-dev's"
		;;
	usdtkit)
		mkdir -p "$RW/bin-usdtkit"
		ln -sfn "$DTRACE" "$RW/bin-usdtkit/dtrace"
		RW_PATH=$RW/bin-usdtkit:$PATH
		RW_INC=-I$USDTKIT_SRCDIR/include
		RW_DTRACE=$RW/bin-usdtkit/dtrace
		;;
	esac
}

# Builds the project with one tool: FUNC DIR runs in a subshell with the
# tool's environment (PATH, RW_INC) and its output goes to DIR.log. The
# SystemTap build is kept while its key (source version, systemtap-sdt-dev
# version, the text of FUNC and of the two functions here that make a
# build's environment, rw_tool_env and rw_build) stays the same: the rest of
# this file (checks, messages) can change without costing a rebuild.
rw_build() { # TOOL FUNC
	local tool=$1 func=$2 dir=$PW/$1 key start rc=0
	rw_tool_env "$tool"
	key="$RW_VERSION $(dpkg-query -W -f='${Version}' systemtap-sdt-dev) $(declare -f rw_tool_env rw_build "$func" | md5sum)"
	if [ "$tool" = systemtap ] && [ -f "$dir.ok" ] && [ "$(cat "$dir.ok")" = "$key" ]; then
		echo "$P: reusing the SystemTap build ($dir)"
		return 0
	fi
	rm -rf "$dir" "$dir.ok" "$dir.log" "$dir.time" "$dir.rc"
	mkdir -p "$dir"
	start=$(date +%s)
	# Not meson's DTRACE (this build's command): configure scripts take a
	# preset DTRACE over their search of PATH.
	(cd "$dir" && unset DTRACE && PATH=$RW_PATH "$func" "$dir") >"$dir.log" 2>&1 || rc=$?
	echo $(($(date +%s) - start)) >"$dir.time"
	echo "$rc" >"$dir.rc"
	[ "$rc" -eq 0 ] && echo "$key" >"$dir.ok"
	echo "$P: $tool build exited $rc after $(cat "$dir.time") s (log: $dir.log)"
}

rw_check_builds() {
	local t r s=""
	for t in $TOOLS; do
		if [ "$(cat "$PW/$t.rc")" = 0 ]; then
			r="ok ($(cat "$PW/$t.time") s)"
		else
			r="FAILED"
			tail -30 "$PW/$t.log" >&2
			rw_fail "the $t build failed (log: $PW/$t.log)"
		fi
		s="$s$r	"
	done
	rw_row "build" "$(echo "$s" | cut -f1)" "$(echo "$s" | cut -f2)"
	for t in $TOOLS; do
		[ "$(cat "$PW/$t.rc")" = 0 ] || fail "$P: cannot go on without both builds"
	done
}

# The <sys/sdt.h> each build compiled with (from its dependency files):
# SystemTap's in one, usdtkit's in the other.
rw_uses() { # SDT-H-OF-SYSTEMTAP-BUILD SDT-H-OF-USDTKIT-BUILD
	rw_row "sdt.h compiled with" "$1" "${2#"$USDTKIT_SRCDIR/"}"
	[ "$1" = "$(dpkg -L systemtap-sdt-dev | grep "/sys/sdt\.h$")" ] ||
		rw_fail "the SystemTap build compiled with '$1', not systemtap-sdt-dev's <sys/sdt.h>"
	[ "$2" = "$USDTKIT_SRCDIR/include/sys/sdt.h" ] ||
		rw_fail "the usdtkit build compiled with '$2', not usdtkit's <sys/sdt.h>"
}

# Warnings in the build logs that mention sdt.h or a generated header: there
# must be no more with usdtkit's than with SystemTap's, the argument type
# checks of usdtkit's header included (issue 34: a plain `dtrace -h` header
# checks no types, as SystemTap's does not; a type check here means a build
# gained warnings by swapping its dtrace). They are also shown apart, with
# the probe each names. And every compiler warning of the whole log,
# whatever it mentions: no more with usdtkit's.
rw_check_warnings() { # HEADER-NAME...
	local t n tc all
	for t in $TOOLS; do
		"${ANALYZE[@]}" warnings "$PW/$t.log" sdt.h "$@" >"$PW/$t.warnings"
	done
	for t in $TOOLS; do
		n=$(wc -l <"$PW/$t.warnings")
		tc=$(grep -c '^typecheck' "$PW/$t.warnings" || true)
		all=$(sed 's/\x1b\[[0-9;]*[mK]//g' "$PW/$t.log" | grep -cE '^[^ :]+:[0-9]+:([0-9]+:)? warning: ' || true)
		eval "w_$t=\$n tc_$t=\$tc all_$t=\$all"
	done
	# shellcheck disable=SC2154
	rw_row "warnings mentioning sdt.h or $*" "$w_systemtap" "$w_usdtkit"
	# shellcheck disable=SC2154
	rw_row "of which argument type checks (probes)" "$tc_systemtap" \
		"$tc_usdtkit$( [ "$tc_usdtkit" = 0 ] || echo " ($(awk '$1 == "typecheck" { print $2 }' \
			"$PW/usdtkit.warnings" | sort | uniq -c | awk '{ printf "%s%s x%s", s, $2, $1; s = ", " }'))")"
	# shellcheck disable=SC2154
	rw_row "compiler warnings in the whole build log" "$all_systemtap" "$all_usdtkit"
	if [ "$w_usdtkit" -gt "$w_systemtap" ]; then
		cat "$PW/usdtkit.warnings" >&2
		rw_fail "$w_usdtkit warnings mention sdt.h or the generated header with usdtkit, $w_systemtap with SystemTap"
	fi
	# shellcheck disable=SC2154
	[ "$all_usdtkit" -le "$all_systemtap" ] ||
		rw_fail "$all_usdtkit compiler warnings in usdtkit's build log, $all_systemtap in SystemTap's"
}

rw_notes_text() { # NOTES-FILE -> "prov: N, prov: N"
	awk '{ printf "%s%s: %s", s, $1, $2; s = ", " } END { print "" }' "$1"
}

# Notes per provider, from readelf, in the files each build produced: equal.
rw_check_notes() { # FILE... (relative to each build's directory)
	local t f files
	for t in $TOOLS; do
		files=()
		for f in "$@"; do files+=("$PW/$t/$f"); done
		"${ANALYZE[@]}" notes "${files[@]}" >"$PW/$t.notes" || fail "readelf -n on $t's files"
	done
	[ -s "$PW/systemtap.notes" ] || fail "$P: SystemTap's build has no probe at all"
	rw_row "probe sites (notes) per provider" "$(rw_notes_text "$PW/systemtap.notes")" \
		"$(rw_notes_text "$PW/usdtkit.notes")"
	diff -u "$PW/systemtap.notes" "$PW/usdtkit.notes" >&2 ||
		rw_fail "notes per provider differ (SystemTap - , usdtkit +)"
}

# Median wall time, in ms, of a command run N times (in the current dir).
rw_median_ms() { # N COMMAND...
	local n=$1 i s e
	shift
	for ((i = 0; i < n; i++)); do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || { echo "FAILED"; return 0; }
		e=$(date +%s%N)
		echo $(((e - s) / 1000000))
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] " ms" }'
}

# Traces a workload with bpftrace in one build: WORKLOAD runs with the
# script attached, and the tracer's output (bt-ready line dropped) is
# checked line by line against EXPECTED, a file of extended regexps:
# every expected line must match a traced line, in order.
rw_trace() { # TOOL SCRIPT WORKLOAD EXPECTED
	local tool=$1 script=$2 workload=$3 expected=$4 out=$PW/$1.bt
	bt_start "$out" "$script"
	"$workload" "$tool" || rw_fail "$tool: the workload failed"
	# Every expected line is a regexp: at least that many traced lines
	# (with bt-ready), then the in-order match below judges them.
	bt_stop '.' $(($(grep -c . "$expected") + 1))
	sed -i '/^bt-ready$/d' "$out"
	if python3 - "$expected" "$out" <<'EOF'; then
import re, sys
exp = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
got = [l.rstrip("\n") for l in open(sys.argv[2])]
i = 0
for line in got:
    if i < len(exp) and re.fullmatch(exp[i], line):
        i += 1
if i < len(exp):
    print("first missing: %r" % exp[i], file=sys.stderr)
    sys.exit(1)
EOF
		eval "bt_$tool=ok"
	else
		echo "--- traced ($out):" >&2
		cat "$out" >&2
		echo "--- expected, in order ($expected):" >&2
		cat "$expected" >&2
		eval "bt_$tool=WRONG"
		rw_fail "$tool: traced values differ"
	fi
}

# Traces a workload with usdtkit's `dtrace -q -p PID -n SCRIPT` (the D
# consumer) in one build: SCRIPT's BEGIN must print "ready" (tracing has
# begun), WORKLOAD runs, dtrace is interrupted, and its whole output must
# be EXPECTED exactly (the exit dump included), its stderr empty. Sets
# d_TOOL for the table.
rw_dtrace() { # TOOL PID SCRIPT WORKLOAD EXPECTED
	local tool=$1 pid=$2 script=$3 workload=$4 expected=$5 out=$PW/$1.d dt rc=0 i
	timeout 60 "$DTRACE" -q -p "$pid" -n "$script" >"$out" 2>"$out.err" &
	dt=$!
	for i in $(seq 600); do
		grep -q '^ready$' "$out" && break
		running "$dt" || break
		sleep 0.05
	done
	if ! grep -q '^ready$' "$out"; then
		cat "$out.err" >&2
		eval "d_$tool=FAILED"
		rw_fail "$tool: dtrace -n did not start"
		kill "$dt" 2>/dev/null
		wait "$dt" 2>/dev/null
		return
	fi
	"$workload" "$tool" || rw_fail "$tool: the workload failed (under dtrace)"
	sleep 0.5 # bpftrace reads its buffers every 100 ms or so
	kill -INT "$dt" 2>/dev/null || true # (the script may have ended it: exit())
	wait "$dt" || rc=$?
	# (blank lines at the end aside; the records must be exact. A lost exit
	# dump here was timeout(1)'s relay of the one SIGINT, counted twice:
	# dtrace/consumer/README.md)
	rw_d_result "$tool" "$rc" "$out" "$expected" "dtrace -n"
}

# A D consumer run's verdict, d_TOOL for the table: exit 0, the output
# exactly EXPECTED, nothing on stderr; else both shown and the check failed.
rw_d_result() { # TOOL RC OUT EXPECTED WHAT
	if [ "$2" = 0 ] && [ "$(cat "$3")" = "$(cat "$4")" ] && [ ! -s "$3.err" ]; then
		eval "d_$1=ok"
	else
		echo "--- $5 exited $2; stdout ($3), then stderr:" >&2
		cat -A "$3" "$3.err" >&2
		echo "--- expected ($4):" >&2
		cat -A "$4" >&2
		eval "d_$1=WRONG"
		rw_fail "$1: $5's output differs"
	fi
}

# `dtrace -l -p PID` (usdtkit's) on a build's running process lists each
# ENTRY, "PROVIDER MODULE FUNCTION PROBE": the provider as DTrace names it
# (PROVIDERpid), the module (the file's name) and the function the site is
# in, as the source names it (GCC's clones, .part.0 and the like, are listed
# under the function they come from). MODULE is an extended regex. Sets
# list_TOOL to "found/expected" for the table.
rw_check_list() { # TOOL PID ENTRY...
	local tool=$1 pid=$2 out=$PW/$1.list entry prov mod fn probe missing=0
	shift 2
	timeout 60 "$DTRACE" -l -p "$pid" >"$out" 2>"$PW/$tool.list.err" ||
		{ cat "$PW/$tool.list.err" >&2; rw_fail "$tool: dtrace -l -p exited non-zero"; }
	for entry in "$@"; do
		read -r prov mod fn probe <<<"$entry"
		grep -qE "^ *[0-9]+ +$prov$pid +$mod +$fn +$probe\$" "$out" || {
			echo "dtrace -l -p: no line for $prov$pid $mod $fn $probe" >&2
			missing=$((missing + 1))
		}
	done
	eval "list_$tool=\$(( $# - missing ))/$#"
	if [ "$missing" -gt 0 ]; then
		cat "$out" >&2
		rw_fail "$tool: dtrace -l -p lacks $missing probe(s) with their module and function"
	fi
}
