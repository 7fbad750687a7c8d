#!/bin/bash
# Erlang/OTP 25 from Debian's erlang source package, its emulator built with
# dynamic tracing (`--with-dynamic-trace=systemtap`; Debian's own package is
# built without probes, so there is no archive binary to compare with) by
# OTP's own build, once with SystemTap's tools and once with usdtkit's, at
# Debian's flags (dpkg-buildflags). OTP builds in its tree: each build is a
# copy of the unpacked source. configure's 1-stage test (`dtrace -h -C` on
# erlang_dtrace.d, a call compiled) and 2-stage test (`dtrace -G -C` on that
# object), then erts's own rules: `dtrace -h -C -Ibeam`, OTP's sed that
# lower-cases each probe's #define line, and `dtrace -G -C -Ibeam` over every
# object of the emulator into erlang_dtrace.o, linked into beam.smp. Built:
# erts/emulator (`make opt`: beam.smp and erl_child_setup), what the probes
# need; not the OTP applications, which have no probe of their own
# (runtime_tools' dyntrace NIF only calls the emulator's), nor the rest of
# erts (OTP's `make emulator` goes on to erts/etc, whose erl_call comes from
# lib/erl_interface, not built: that step fails, after beam.smp, with either
# tool). The interpreter
# flavour (`--disable-jit`), where Debian's package has the JIT: the same
# header, wrapper and rules (a few call sites differ by flavour), without the
# JIT's C++ code generator (asmjit), which would about double the build on
# the suite's shared 2 cores. Then compared: both build, configure's two tests pass
# alike, no more warnings with usdtkit (those mentioning sdt.h or the
# generated header, and every compiler warning of the log), the same notes
# per provider in beam.smp, the same sites per probe; the -h and -G times.
#
# The source comes without the .dsc's uploader signature: this upload's is
# made with SHA-1, which dpkg refuses ("no acceptable signature found").
# apt authenticates the .dsc and every tarball anyway, through the archive
# key's signature of the Release file and the Sources index's SHA-256 sums
# (rw_fetch apt-chain, in lib.sh); dpkg-source -x checks the tarballs
# against the .dsc.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/realworld/lib.sh"

rw_project erlang
rw_fetch erlang apt-chain
rw_need_pkgs make gcc g++ perl pkg-config dpkg-dev libncurses-dev zlib1g-dev

BEAM=bin/x86_64-pc-linux-gnu/beam.smp
build_erlang() { # DIR
	cp -a "$RW_SRC/." . &&
		./configure --prefix=/usr --with-dynamic-trace=systemtap --disable-jit --without-javac \
			--without-wx --without-odbc --enable-shared-zlib --disable-builtin-zlib --disable-silent-rules \
			CFLAGS="$(dpkg-buildflags --get CFLAGS) $RW_INC" \
			CXXFLAGS="$(dpkg-buildflags --get CXXFLAGS) $RW_INC" \
			CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS) $RW_INC" \
			LDFLAGS="$(dpkg-buildflags --get LDFLAGS)" &&
		make -j2 V=1 -C erts/emulator ERL_TOP="$PWD" FLAVOR=emu opt
}
for t in $TOOLS; do rw_build "$t" build_erlang; done
rw_check_builds

# configure's tests, the build's -G (dtrace, from the build's PATH: the
# tool's first), and the <sys/sdt.h> compiled (erl_process.o's compile
# command from the log run again with -M).
sdt_of() { # TOOL
	local cmd
	cmd=$(grep -m1 -E -- ' -c beam/erl_process\.c ' "$PW/$1.log" | sed 's/ -o [^ ]*erl_process\.o\( \|$\)/ /')
	(cd "$PW/$1/erts/emulator" && bash -c "$cmd -M") | tr ' ' '\n' | grep '/sys/sdt\.h$' | sort -u
}
for t in $TOOLS; do
	grep -q '^checking for 1-stage DTrace precompilation\.\.\. yes$' "$PW/$t.log" ||
		rw_fail "$t: configure's 1-stage DTrace test did not say yes"
	grep -q '^checking for 2-stage DTrace precompilation\.\.\. yes$' "$PW/$t.log" ||
		rw_fail "$t: configure's 2-stage DTrace test did not say yes"
	grep -q '^[[:space:]]*dtrace -G -C -Ibeam' "$PW/$t.log" || rw_fail "$t: the build did not run dtrace -G"
	eval "sdt_$t=\$(sdt_of $t)"
done
# shellcheck disable=SC2154
rw_uses "$sdt_systemtap" "$sdt_usdtkit"
rw_check_warnings erlang_dtrace.h dtrace-wrapper.h
# shellcheck disable=SC2154
[ "$all_usdtkit" = "$all_systemtap" ] ||
	rw_fail "compiler warnings in the whole log: $all_usdtkit with usdtkit, $all_systemtap with SystemTap"
rw_check_notes "$BEAM"
# The same per probe name.
per_probe() { # FILE
	readelf -n --wide "$1" | sed -n 's/^ *Name: //p' | sort | uniq -c | awk '{ print $2 " " $1 }'
}
for t in $TOOLS; do per_probe "$PW/$t/$BEAM" >"$PW/$t.per-probe"; done
rw_row "probes with sites (names)" "$(wc -l <"$PW/systemtap.per-probe")" "$(wc -l <"$PW/usdtkit.per-probe")"
diff -u "$PW/systemtap.per-probe" "$PW/usdtkit.per-probe" >&2 ||
	rw_fail "sites per probe differ (SystemTap - , usdtkit +)"

# -h and -G as erts's rules ran them (from the log, in erts/emulator), each
# writing a scratch file instead; -G on copies of the objects (usdtkit's may
# rewrite the sites of the objects it is given).
time_tools() {
	local t hcmd gcmd objs hms gms
	for t in $TOOLS; do
		rw_tool_env "$t"
		hcmd=$(grep -m1 -E '^[[:space:]]*dtrace -h -C -Ibeam -s beam/erlang_dtrace\.d' "$PW/$t.log" || true)
		gcmd=$(sed -n '/^[[:space:]]*dtrace -G -C -Ibeam/,/[^\\]$/p' "$PW/$t.log" | tr -d '\\\n')
		objs=$(echo "$gcmd" | sed 's/.* -o [^ ]*erlang_dtrace\.o//')
		if [ -z "$hcmd" ] || [ -z "$objs" ]; then
			rw_fail "$t: no -h or -G command in the build log"
			continue
		fi
		rm -rf "$T/time-$t" && mkdir -p "$T/time-$t/beam"
		cp "$PW/$t/erts/emulator/beam/erlang_dtrace.d" "$T/time-$t/beam/"
		# shellcheck disable=SC2086
		(cd "$PW/$t/erts/emulator" && cp --parents $objs "$T/time-$t/")
		cd "$T/time-$t"
		hms=$(rw_median_ms 7 env PATH="$RW_PATH" bash -c "${hcmd/-o *erlang_dtrace.tmp/-o scratch.h}")
		# shellcheck disable=SC2086
		gms=$(rw_median_ms 7 "$RW_DTRACE" -G -C -Ibeam -s beam/erlang_dtrace.d -o scratch.o $objs)
		eval "h_$t=\$hms g_$t=\$gms n_$t=\$(echo \$objs | wc -w)"
		cd "$T"
		rm -rf "$T/time-$t"
	done
	# shellcheck disable=SC2154
	rw_row "dtrace -h -C (median of 7)" "$h_systemtap" "$h_usdtkit"
	# shellcheck disable=SC2154
	rw_row "dtrace -G -C over $n_usdtkit objects (median of 7)" "$g_systemtap" "$g_usdtkit"
}
time_tools
rw_finish
