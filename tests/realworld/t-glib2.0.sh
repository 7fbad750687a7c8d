#!/bin/bash
# GLib (glib2.0) from Debian's source package, built by its own meson build
# (-Ddtrace=true: `dtrace -h` for glib_probes.h and gobject_probes.h, and
# `dtrace -G -s` on the .d alone, no objects, linked into the libraries)
# with SystemTap's tools and with usdtkit's; only the two libraries that
# carry probes are built (libglib, libgobject), with the project's own
# warning flags at -O2 -g. Then compared: both build, no more header
# warnings with usdtkit, the same notes per provider, the same exact values
# traced by bpftrace from a program calling into the libraries, and
# `dtrace -l -p` on that program lists the probes with module and function.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/realworld/lib.sh"

rw_project glib2.0
rw_need_pkgs meson ninja-build pkg-config gcc python3 libffi-dev libpcre2-dev libmount-dev \
	libselinux1-dev zlib1g-dev libelf-dev
rw_fetch glib2.0

# libglib-2.0.so.0.7400.6 for 2.74.6 (GLib's own rule: minor * 100).
upstream=${RW_VERSION%%-*}
IFS=. read -r _ minor micro <<<"$upstream"
SOVER=0.$((minor * 100)).$micro
LIBS="glib/libglib-2.0.so.$SOVER gobject/libgobject-2.0.so.$SOVER"

# shellcheck disable=SC2086
build_glib() { # DIR
	meson setup . "$RW_SRC" --buildtype=debugoptimized -Ddtrace=true -Dc_args="$RW_INC" \
		-Dtests=false -Dman=false -Dgtk_doc=false -Dinstalled_tests=false -Dnls=disabled \
		-Dsysprof=disabled &&
		ninja -j2 -v $LIBS
}
for t in $TOOLS; do rw_build "$t" build_glib; done
rw_check_builds
for t in $TOOLS; do
	rw_tool_env "$t"
	grep -qE "^\[[0-9/]+\] $RW_DTRACE -G " "$PW/$t.log" || rw_fail "$t: the build did not run $RW_DTRACE -G"
	eval "sdt_$t=\$(ninja -C \"\$PW/$t\" -t deps 'glib/libglib-2.0.so.$SOVER.p/gquark.c.o' |
		grep -o '[^ ]*/sys/sdt\.h\$' | sort -u)"
done
# shellcheck disable=SC2154
rw_uses "$sdt_systemtap" "$sdt_usdtkit"
rw_check_warnings glib_probes.h gobject_probes.h
# shellcheck disable=SC2086
rw_check_notes $LIBS

# -h and -G as the build runs them (ninja -v's command lines), in the build
# directory, each writing a scratch file.
time_tools() {
	local t cmd hms=() gms=() out
	for t in $TOOLS; do
		rw_tool_env "$t"
		cd "$PW/$t"
		for op in h G; do
			while IFS= read -r cmd; do
				out=$(echo "$cmd" | sed -nE 's/.* -o ([^ ]+).*/\1/p')
				cmd=${cmd/ -o $out/ -o $T/scratch-${out##*/}}
				# shellcheck disable=SC2086
				eval "${op}_$t+=\"\$(rw_median_ms 7 $cmd | cut -d' ' -f1) \""
			done < <(grep -F "] $RW_DTRACE -$op " "$PW/$t.log" | sed 's/^\[[0-9/]*\] //')
		done
	done
	cd "$T"
	# shellcheck disable=SC2154
	rw_row "dtrace -h, glib + gobject (ms, median of 7)" "$(echo $h_systemtap | tr ' ' +)" "$(echo $h_usdtkit | tr ' ' +)"
	# shellcheck disable=SC2154
	rw_row "dtrace -G, no objects, glib + gobject (ms, median of 7)" "$(echo $G_systemtap | tr ' ' +)" \
		"$(echo $G_usdtkit | tr ' ' +)"
}
time_tools

# The workload, compiled once per build against that build's headers and
# libraries.
PROG_PID=""
at_exit 'stop_bg "$PROG_PID" TERM 5'
workload() { # TOOL
	local b=$PW/$1 i
	gcc -O2 -Wall -Werror -o "$b/rwglib" "$USDTKIT_SRCDIR/tests/realworld/glib2.0/rwglib.c" \
		-I"$RW_SRC" -I"$RW_SRC/glib" -I"$RW_SRC/gobject" -I"$b" -I"$b/glib" \
		"$b/gobject/libgobject-2.0.so.$SOVER" "$b/glib/libglib-2.0.so.$SOVER" \
		-Wl,-rpath,"$b/glib:$b/gobject" || return 1
	"$b/rwglib" >"$b.out" 2>&1 &
	PROG_PID=$!
	for ((i = 0; i < 200; i++)); do
		grep -q '^done$' "$b.out" && break
		running "$PROG_PID" || { cat "$b.out" >&2; return 1; }
		sleep 0.05
	done
	sed '/^done$/d; s/[][\.*^$()+?{}|]/\\&/g' "$b.out" >"$T/expected"
	[ -s "$T/expected" ]
}

# dtrace -l -p on the program: the probes traced, in the two libraries
# (module: the file's name), with the function of each site in GLib's
# source (quark_from_string is inlined at -O2, or partly: a .part.0 clone).
list_check() { # TOOL
	local g="glib libglib-2\\.0\\.so\\.$SOVER" o="gobject libgobject-2\\.0\\.so\\.$SOVER"
	rw_check_list "$1" "$PROG_PID" "$g quark_from_string quark-new" "$g g_malloc mem-alloc" \
		"$g g_free mem-free" "$g g_source_set_name_full source-set_name" \
		"$o type_node_any_new_W type-new" "$o g_type_create_instance object-new"
}

for t in $TOOLS; do
	g=$PW/$t/glib/libglib-2.0.so.$SOVER
	o=$PW/$t/gobject/libgobject-2.0.so.$SOVER
	rw_trace "$t" "
usdt:$g:glib:quark__new { printf(\"quark_new %s %u\n\", str(arg0), arg1); }
usdt:$g:glib:mem__alloc /arg1 == 12345/ { printf(\"mem_alloc %lu %u %u %u\n\", arg0, arg1, arg2, arg3); }
usdt:$g:glib:mem__free { printf(\"mem_free %lu\n\", arg0); }
usdt:$g:glib:source__set_name { printf(\"source_set_name %lu %s\n\", arg0, str(arg1)); }
usdt:$o:gobject:type__new { printf(\"type_new %s %lu %lu\n\", str(arg0), arg1, arg2); }
usdt:$o:gobject:object__new { printf(\"object_new %lu %lu\n\", arg0, arg1); }" workload "$T/expected"
	if [ -n "$PROG_PID" ] && running "$PROG_PID"; then
		list_check "$t"
	else
		rw_fail "$t: the workload program is not running for dtrace -l -p"
	fi
	stop_bg "$PROG_PID" TERM 5
	PROG_PID=""
done
# shellcheck disable=SC2154
rw_row "bpftrace: 6 probes, exact values (strings as strings)" "$bt_systemtap" "$bt_usdtkit"
# shellcheck disable=SC2154
rw_row "dtrace -l -p: probes with module and function" "$list_systemtap" "$list_usdtkit"
rw_finish
