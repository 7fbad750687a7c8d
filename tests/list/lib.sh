# Helpers shared by the dtrace -l tests (source after tests/lib/common.sh).
#
# Expectations are never taken from usdtkit: probe names and addresses come
# from `readelf -n`, functions from `nm` (the symbol containing the site) and
# `addr2line -i` (the inlined function, when the site was inlined), and the
# line format from illumos dtrace(1M): "%5d %10s %17s %33s %s".
PROGS="$USDTKIT_SRCDIR/tests/list/progs"
HEADER_LINE='   ID   PROVIDER            MODULE                          FUNCTION NAME'
# The test programs must never talk to a helper daemon that may run on this
# machine: their drti constructor is pointed at a socket nobody listens on.
NO_DAEMON_SOCK="$T/no-daemon.sock"

for tool in readelf nm addr2line; do
	command -v $tool >/dev/null || fail "$tool is not installed (binutils)"
done

# build_app DIR CC CFLAGS...: DIR/app (provider ltapp) linked with
# DIR/libltlib.so (provider ltlib), each with its own -G object. With
# LT_SUFFIX set (letters only), the providers are ltapp$LT_SUFFIX and
# ltlib$LT_SUFFIX: unique tracefs groups when a daemon registers them.
build_app() {
	local d=$1 cc=$2 s=${LT_SUFFIX:-} f
	shift 2
	mkdir -p "$d/src"
	for f in app.d app.c lib.d lib.c lib.h; do
		sed -e "s/ltapp/ltapp$s/g; s/LTAPP_/LTAPP${s^^}_/g" \
			-e "s/ltlib/ltlib$s/g; s/LTLIB_/LTLIB${s^^}_/g" "$PROGS/$f" >"$d/src/$f"
	done
	(
		cd "$d" || exit 1
		"$DTRACE" -h -s src/app.d -o app.h &&
			"$DTRACE" -h -s src/lib.d -o lib_prov.h &&
			$cc "$@" -I"$SDT_INC" -I. -Isrc -fPIC -c src/lib.c -o lib.o &&
			CC=$cc "$DTRACE" -G -s src/lib.d -o lib-prov.o lib.o &&
			$cc -shared -o libltlib.so lib.o lib-prov.o &&
			$cc "$@" -I"$SDT_INC" -I. -Isrc -c src/app.c -o app.o &&
			CC=$cc "$DTRACE" -G -s src/app.d -o app-prov.o app.o 2>/dev/null &&
			$cc -o app app.o app-prov.o -L. -lltlib -Wl,-rpath,'$ORIGIN'
	) || fail "building the test program in $d with $cc $*"
}

# build_stap DIR CC [FLAGS...]: DIR/stap, probes from <sys/sdt.h> macros
# alone, no -G: SystemTap's header (Debian has it for x86-64 only; give
# -I"$SDT_INC" for ours, e.g. with -m32).
build_stap() {
	local d=$1 cc=$2
	shift 2
	mkdir -p "$d"
	$cc -O2 -g "$@" -o "$d/stap" "$PROGS/stap.c" || fail "building stap.c with $cc $*"
}

# build_cxx DIR CXX: DIR/cxx from progs/cxx.cc at -O2 -g, SystemTap's header.
build_cxx() {
	mkdir -p "$1"
	$2 -O2 -g -o "$1/cxx" "$PROGS/cxx.cc" || fail "building cxx.cc with $2"
}

# start_prog PROG: runs PROG until the test ends, once it is ready. Sets PID.
# PROG_SOCK (default: a socket nobody listens on) is its helper socket.
start_prog() {
	local ready i
	ready="$T/ready.$RANDOM$RANDOM"
	USDTKIT_HELPER_SOCKET="${PROG_SOCK:-$NO_DAEMON_SOCK}" "$1" "$ready" &
	PID=$!
	at_exit "kill $PID 2>/dev/null"
	for i in $(seq 200); do
		[ -e "$ready" ] && return 0
		kill -0 "$PID" 2>/dev/null || fail "$1 exited before it was ready"
		sleep 0.05
	done
	fail "$1 was not ready after 10 s"
}

# The stapsdt notes of FILE as "provider name pc" lines, read by readelf.
note_sites() {
	readelf -n "$1" | awk '
		function after(key,   s) { s = $0; sub(".*" key " *", "", s); sub("[ ,\t].*", "", s); return s }
		/Provider:/ { p = after("Provider:") }
		/Name:/ { n = after("Name:") }
		/Location:/ { print p, n, after("Location:") }'
}

# The function symbol of FILE that contains PC (hex), from nm (nm -D for a
# stripped file, as dtrace falls back to .dynsym).
nm_function() { # file pc
	local pc=$(($2)) addr size type name best="" dyn=""
	[ -n "$(nm --defined-only "$1" 2>/dev/null | head -n 1)" ] || dyn=-D
	while read -r addr size type name; do
		case $type in t | T | W | w | i) ;; *) continue ;; esac
		[ -n "$size" ] || continue
		if [ $((16#$addr)) -le "$pc" ] && [ "$pc" -lt $((16#$addr + 16#$size)) ]; then
			best=${name%%@*} # nm -D shows versions (f@@VERSION): not part of the name
			# a global symbol is preferred, as DTrace does
			case $type in T) break ;; esac
		fi
	done < <(nm -S --defined-only $dyn "$1" 2>/dev/null | awk 'NF == 4')
	echo "$best"
}

# A compiler's copy of f (GCC's f.part.0, f.isra.0, f.constprop.0.isra.0,
# f.cold, f.lto_priv.0; clang's f.llvm.123): f.
clone_base() { # symbol
	sed -E 's/(\.(part|isra|constprop|cold|lto_priv|localalias|clone|llvm|specialized)(\.[0-9]+)?)+$//' <<<"$1"
}

# The functions at PC in FILE, innermost (inlined) first, one a line: what
# `addr2line -f -i` names. Except in a file where an inlined subroutine's
# ranges are a DWARF 5 indexed range list (DW_FORM_rnglistx: clang 14 on
# arm64 splits the inlined code in pieces): there addr2line 2.40 loses the
# inlined frame (it names the caller alone, with the inlined line), while
# gdb and DWARF (llvm-dwarfdump) place the pc in the inlined subroutine. For
# such a file the frames are gdb's blocks, all pcs in one gdb run.
pc_frames() { # file pc
	local key
	key="$T/.frames.$(stat -L -c '%n %i %s %Y' "$1" | cksum | cut -d' ' -f1)"
	if [ ! -e "$key.kind" ]; then
		if readelf --debug-dump=info "$1" 2>/dev/null | awk '
			/DW_TAG_inlined_subroutine/ { inl = 1; next }
			/Abbrev Number/ { inl = 0 }
			inl && /DW_AT_ranges *: \(index:/ { found = 1; exit }
			END { exit !found }'; then
			command -v gdb >/dev/null || fail "gdb is needed to read $1's DWARF 5 range lists"
			# shellcheck disable=SC2016
			timeout $((120 * TIME_FACTOR)) gdb -nx -q -batch -ex "python pcs = '$(note_sites "$1" | awk '{ print $3 }' | tr '\n' ' ')'.split()" -ex 'python
for pc in pcs:
    b, names = gdb.block_for_pc(int(pc, 16)), []
    while b is not None:
        if b.function is not None:
            names.append(b.function.linkage_name)
        b = b.superblock
    print("frames", pc, " ".join(names) if names else "??")' "$1" >"$key.gdb" 2>&1 ||
				{ cat "$key.gdb" >&2; fail "gdb could not read the blocks of $1"; }
			echo gdb >"$key.kind"
		else
			echo addr2line >"$key.kind"
		fi
	fi
	if [ "$(cat "$key.kind")" = gdb ]; then
		awk -v pc="$2" '$1 == "frames" && $2 == pc { for (i = 3; i <= NF; i++) print $i; f = 1 }
			END { if (!f) print "??" }' "$key.gdb"
	else
		addr2line -f -i -e "$1" "$2" | awk 'NR % 2 == 1'
	fi
}

# The function DTrace names for the site at PC: the innermost inlined
# function when addr2line -i shows the site inlined, else nm's symbol (and
# then addr2line, when it knows a name, must agree with nm); for a symbol of
# a compiler's copy, the source function: DWARF's (addr2line's) when the file
# has it, else the symbol without the copy's suffixes.
site_function() { # file pc
	local frames a2l sym base
	frames=$(pc_frames "$1" "$2")
	a2l=$(echo "$frames" | head -n 1)
	sym=$(nm_function "$1" "$2")
	if [ "$(echo "$frames" | wc -l)" -gt 1 ]; then
		echo "$a2l"
		return
	fi
	base=$(clone_base "$sym")
	if [ "$base" != "$sym" ]; then
		# Without DWARF, addr2line names the symbol itself.
		if [ "$a2l" = "??" ] || [ "$a2l" = "$sym" ]; then echo "$base"; else echo "$a2l"; fi
		return
	fi
	[ "$a2l" = "??" ] || [ "$a2l" = "$sym" ] ||
		fail "nm ($sym) and addr2line ($a2l) disagree about the function at $2 in $1"
	echo "$sym"
}

# expected_lines PID FILE [MODULE]: the listing lines (ID column cut) that
# FILE's probes give in process PID, sorted and unique.
expected_lines() {
	local pid=$1 file=$2 mod=${3:-$(basename "$2")} p n pc
	note_sites "$file" | while read -r p n pc; do
		printf '%10s %17s %33s %s\n' "$p$pid" "$mod" "$(site_function "$file" "$pc")" \
			"${n//__/-}"
	done | sort -u
}

# listing_lines FILE: a dtrace -l output without its header and ID column, sorted.
listing_lines() {
	tail -n +2 "$1" | cut -c7- | sort
}

# check_ids FILE: the header is DTrace's and the IDs count 1, 2, 3 ...
check_ids() {
	local first i=0 id
	first=$(head -n 1 "$1")
	expect_eq "$first" "$HEADER_LINE" "header line"
	while read -r id; do
		i=$((i + 1))
		expect_eq "$id" "$i" "probe id on line $((i + 1))"
	done < <(tail -n +2 "$1" | cut -c1-5)
}

# The .d's probe names that have a site, in DTrace's spelling, sorted.
d_probe_names() {
	grep -oE '^[[:space:]]*probe [A-Za-z_0-9]+' "$1" | awk '{ print $2 }' | grep -v '^declared__unused$' |
		sed 's/__/-/g' | sort
}
