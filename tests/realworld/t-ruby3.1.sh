#!/bin/bash
# Ruby 3.1 (ruby3.1) from Debian's source package, built by its own
# autotools with SystemTap's tools and with usdtkit's, out of the source
# tree, configured as debian/rules configures it (shared libruby, its
# soname and program suffix, Debian's flags from dpkg-buildflags with
# hardening=+bindnow and no LTO) and with configure's own DTrace detection,
# as Debian leaves it: configure's `dtrace -h` test, its `-G` test (an
# object unchanged by -G means "link probes.o", changed means Solaris-style
# "rebuild"), then `dtrace -h -C` on probes.d with Ruby's sed (RUBY_ to
# RUBY_DTRACE_, `char *` to `const char *`), and `dtrace -G -C` over the
# objects with probes into probes.o, linked into libruby. Built: the
# interpreter and libruby (`make program`) and the MJIT header (`make
# mjit-headers`: vm.c preprocessed with probes.h and <sys/sdt.h>, then
# transformed and compiled again by Ruby's own script), what Debian's
# `make main` builds with a probe in it; not the extensions, which have
# none. Then compared: both build, the same DTrace path chosen by
# configure, no more warnings with usdtkit (those mentioning sdt.h or the
# generated header, and every compiler warning of the log), the same notes
# per provider in libruby, and the same as in Debian's binary package
# libruby3.1 of this version; a script's probes traced by bpftrace; the
# -h and -G times.
#
# The source comes without the .dsc's uploader signature: this upload's is
# made with SHA-1, which dpkg refuses ("no acceptable signature found").
# apt authenticates the .dsc and every tarball anyway, through the archive
# key's signature of the Release file and the Sources index's SHA-256 sums
# (rw_fetch apt-chain, in lib.sh); dpkg-source -x checks the tarballs
# against the .dsc.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/realworld/lib.sh"

rw_project ruby3.1
rw_fetch ruby3.1 apt-chain
rw_need_pkgs make gcc pkg-config dpkg-dev bison libgmp-dev zlib1g-dev libffi-dev libyaml-dev

LIBRUBY=libruby-3.1.so.3.1.2
build_ruby() { # DIR
	export DEB_BUILD_MAINT_OPTIONS="hardening=+bindnow optimize=-lto"
	"$RW_SRC/configure" --prefix=/usr --enable-multiarch --target=x86_64-linux-gnu \
		--program-suffix=3.1 --with-soname=ruby-3.1 --enable-shared --disable-rpath \
		--with-sitedir=/usr/local/lib/site_ruby --with-compress-debug-sections=no \
		CFLAGS="$(dpkg-buildflags --get CFLAGS)" CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS) $RW_INC" \
		LDFLAGS="$(dpkg-buildflags --get LDFLAGS)" &&
		make -j2 V=1 program mjit-headers
}
for t in $TOOLS; do rw_build "$t" build_ruby; done
rw_check_builds

# What configure decided (both tools alike: USDT available, -G needed and
# it leaves objects as they were, so probes.o is linked), that the build
# ran dtrace -G (the PATH's, the tool's), and which <sys/sdt.h> it compiled (from
# vm.o's dependency file: Ruby's build writes none, so vm.o's compile
# command from the log is run again with -M).
sdt_of() { # TOOL
	local cmd
	cmd=$(grep -m1 -E -- ' -o vm\.o ' "$PW/$1.log")
	(cd "$PW/$1" && bash -c "${cmd/ -o vm.o/} -M") | tr ' ' '\n' | grep '/sys/sdt\.h$' | sort -u
}
for t in $TOOLS; do
	rw_tool_env "$t"
	grep -q '^checking whether dtrace USDT is available\.\.\. yes' "$PW/$t.log" ||
		rw_fail "$t: configure found no USDT"
	grep -q '^checking whether dtrace needs post processing\.\.\. yes$' "$PW/$t.log" ||
		rw_fail "$t: configure's -G test did not say yes (probes.o linked)"
	grep -q -- " -G -C .*-o probes\.o" "$PW/$t.log" || rw_fail "$t: the build did not run dtrace -G"
	eval "conf_$t=\$(sed -n 's/^checking whether dtrace USDT is available\.\.\. //p' \"\$PW/\$t.log\" | head -1)"
	# (the Makefile says `dtrace`, found on the build's PATH: the tool's first)
	grep -qE '^DTRACE += dtrace( |$)' "$PW/$t/Makefile" || rw_fail "$t: the Makefile's DTRACE is not dtrace"
	eval "sdt_$t=\$(sdt_of $t)"
done
# What configure's USDT test settled on: it tries `dtrace -xnolibs -h`
# first (illumos' and Oracle's DTrace take -x nolibs), then plain `-h`.
# SystemTap's dtrace refuses the option, usdtkit's takes it, as DTrace does,
# so the Makefile's DTRACE is `dtrace -xnolibs` with usdtkit: shown, not
# judged (the rest of the build is the same path).
# shellcheck disable=SC2154
rw_row "configure: dtrace USDT available (option)" "$conf_systemtap" "$conf_usdtkit"
# shellcheck disable=SC2154
rw_uses "$sdt_systemtap" "$sdt_usdtkit"
rw_check_warnings probes.h
# shellcheck disable=SC2154
[ "$all_usdtkit" = "$all_systemtap" ] ||
	rw_fail "compiler warnings in the whole log: $all_usdtkit with usdtkit, $all_systemtap with SystemTap"
rw_check_notes "$LIBRUBY"

# Debian's binary package of the same version.
arch=$PW/archive
if [ ! -f "$arch.ok" ]; then
	rm -rf "$arch" && mkdir -p "$arch"
	(cd "$arch" && apt-get download "libruby3.1=$RW_VERSION") >"$T/download.log" 2>&1 ||
		{ cat "$T/download.log" >&2; fail "apt-get download libruby3.1=$RW_VERSION"; }
	dpkg-deb -x "$arch"/libruby3.1_*.deb "$arch/root"
	touch "$arch.ok"
fi
"${ANALYZE[@]}" notes "$arch/root/usr/lib/x86_64-linux-gnu/$LIBRUBY" >"$PW/archive.notes" ||
	fail "readelf -n on the archive's libruby"
rw_row "probe sites (notes) per provider, Debian's libruby3.1 $RW_VERSION" \
	"$(rw_notes_text "$PW/archive.notes")" "$(rw_notes_text "$PW/usdtkit.notes")"
diff -u "$PW/archive.notes" "$PW/usdtkit.notes" >&2 ||
	rw_fail "notes per provider differ from the archive's libruby (archive - , usdtkit +)"
# The same per probe name: each probe's sites, in either build and the
# archive's.
per_probe() { # FILE
	readelf -n --wide "$1" | sed -n 's/^ *Name: //p' | sort | uniq -c | awk '{ print $2 " " $1 }'
}
for t in $TOOLS; do per_probe "$PW/$t/$LIBRUBY" >"$PW/$t.per-probe"; done
per_probe "$arch/root/usr/lib/x86_64-linux-gnu/$LIBRUBY" >"$PW/archive.per-probe"
rw_row "probes with sites (names, archive: $(wc -l <"$PW/archive.per-probe"))" \
	"$(wc -l <"$PW/systemtap.per-probe")" "$(wc -l <"$PW/usdtkit.per-probe")"
for t in $TOOLS; do
	diff -u "$PW/archive.per-probe" "$PW/$t.per-probe" >&2 ||
		rw_fail "$t: sites per probe differ from the archive's (archive - , $t +)"
done

# -h and -G as the Makefile ran them (from the log, in the build's tree),
# each writing a scratch file instead. Ruby's -G is given no object (probes.o
# is linked, the objects are left as they are): the .d alone.
time_tools() {
	local t hcmd gcmd hms gms
	for t in $TOOLS; do
		eval "h_$t=FAILED g_$t=FAILED"
		rw_tool_env "$t"
		hcmd=$(grep -m1 -E '^[^ ]*dtrace( +-x[a-z]+)? +-o probes\.h\.tmp -h -C ' "$PW/$t.log" || true)
		gcmd=$(grep -m1 -E '^[^ ]*dtrace( +-x[a-z]+)? +-G -C .* -o probes\.o' "$PW/$t.log" || true)
		if [ -z "$hcmd" ] || [ -z "$gcmd" ]; then
			rw_fail "$t: no -h or -G command in the build log"
			continue
		fi
		cd "$PW/$t"
		hms=$(rw_median_ms 7 env PATH="$RW_PATH" bash -c "${hcmd/-o probes.h.tmp/-o $T/scratch.h}")
		gms=$(rw_median_ms 7 env PATH="$RW_PATH" bash -c "${gcmd/-o probes.o/-o $T/scratch.o}")
		eval "h_$t=\$hms g_$t=\$gms"
		cd "$T"
	done
	# shellcheck disable=SC2154
	rw_row "dtrace -h -C (median of 7)" "$h_systemtap" "$h_usdtkit"
	# shellcheck disable=SC2154
	rw_row "dtrace -G -C, no objects (median of 7)" "$g_systemtap" "$g_usdtkit"
}
time_tools

# The workload, traced by usdtkit's D consumer (`dtrace -q -c`, on its BPF
# engine: bpftrace finds no location for some of libruby's probes, in
# Debian's libruby too, "Error finding location for probe ...
# method__entry"): the built ruby3.1 on the built libruby runs a script
# with a method, a rescued exception, a symbol made at run time and an
# exit. `TracePoint.new {}.enable` turns the VM's hooks on, without which
# Ruby 3.1 fires no method-entry (Ruby's own test/dtrace does the same).
# The expected output was checked against Debian's /usr/bin/ruby3.1, which
# prints exactly it.
cat >"$T/rw.rb" <<'RB'
TracePoint.new {}.enable
def rw_add(a, b)
  a + b
end
s = rw_add(20, 22)
begin
  raise ArgumentError, "rw"
rescue ArgumentError
end
"rw_sym_#{s}".to_sym
exit(s == 42 ? 0 : 3)
RB
f=$T/rw.rb
D_SCRIPT="ruby*:::method-entry /copyinstr(arg2) == \"$f\"/ {
	printf(\"entry %s %s %s %d\\n\", copyinstr(arg0), copyinstr(arg1), copyinstr(arg2), arg3); }
ruby*:::method-return /copyinstr(arg2) == \"$f\"/ {
	printf(\"return %s %s %s %d\\n\", copyinstr(arg0), copyinstr(arg1), copyinstr(arg2), arg3); }
ruby*:::raise /copyinstr(arg1) == \"$f\"/ { printf(\"raise %s %s %d\\n\", copyinstr(arg0), copyinstr(arg1), arg2); }
ruby*:::symbol-create /copyinstr(arg1) == \"$f\" && arg2 > 0/ { printf(\"symbol %s %d\\n\", copyinstr(arg0), arg2); }
ruby*:::cmethod-entry /copyinstr(arg2) == \"$f\" && copyinstr(arg0) == \"Kernel\"/ { @k[copyinstr(arg1)] = count(); }"
{
	printf 'entry Object rw_add %s 3\nreturn Object rw_add %s 4\n' "$f" "$f"
	printf 'raise ArgumentError %s 7\nsymbol rw_sym_42 10\nraise SystemExit %s 11\n\n' "$f" "$f"
	printf '  %-50s %16d\n' exit 1 raise 1
} >"$T/d-expected"
# (The probes are all in libruby, the build's: ldd must say so. The
# encoding tables, enc/encdb.so and transdb.so, which ruby loads at start,
# are the installed ruby3.1's: `make encs` is not built here.)
for t in $TOOLS; do
	LD_LIBRARY_PATH=$PW/$t ldd "$PW/$t/ruby3.1" | grep -qF "=> $PW/$t/libruby-3.1.so.3.1 " ||
		rw_fail "$t: ruby3.1 does not run on the build's libruby"
	rc=0
	(cd "$PW/$t" && LD_LIBRARY_PATH=$PW/$t timeout 60 "$DTRACE" -q \
		-c "$PW/$t/ruby3.1 --disable-gems $f" -n "$D_SCRIPT") >"$PW/$t.d" 2>"$PW/$t.d.err" || rc=$?
	rw_d_result "$t" "$rc" "$PW/$t.d" "$T/d-expected" "dtrace -c -n"
done
# shellcheck disable=SC2154
rw_row "dtrace -q -c -n (BPF engine): 5 probes, predicates, an aggregation, exact output" "$d_systemtap" "$d_usdtkit"
rw_finish
