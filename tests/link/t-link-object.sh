#!/bin/bash
# Properties of the -G object and of its use: no-provider and empty-provider
# inputs, several -G objects in one link (same and different providers), no
# text relocations and no executable stack in a PIE and a shared library, the
# metadata note and semaphores surviving --gc-sections with bfd, gold and lld,
# concurrent runs in one directory, and failures that leave nothing behind.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
mkdir -p "$T/tmp" "$T/w"
export TMPDIR="$T/tmp"
cd "$T/w"

listing() { ls -A; }

# --- no provider at all (CPython's configure test) and empty providers ---
echo 'BEGIN{}' >noprov.d
printf 'provider empty {\n\t/* nothing yet */\n};\n' >empty.d
echo 'int main(void) { return 0; }' >main.c
for d in noprov empty; do
	"$DTRACE" -G -s $d.d -o $d.o || fail "$d: -G failed"
	expect_eq "$(readelf -h $d.o | awk '/Type:/ {print $2}')" REL "$d: object type"
	gcc main.c $d.o -o $d-prog && ./$d-prog || fail "$d: object does not link and run"
	echo "ok: $d"
done
# Without -o: basename of the .d with .o, in the current directory.
"$DTRACE" -G -s noprov.d && [ -s noprov.o ] || fail "default output name"

# --- two providers, two -G objects for one provider, all in one link ---
cat >a.d <<'D'
provider pa { probe go(int); probe stop(); };
D
cat >b.d <<'D'
provider pb { probe go(int); };
D
"$DTRACE" -h -s a.d -o a.h
"$DTRACE" -h -s b.d -o b.h
cat >ua.c <<'C'
#include "a.h"
int ua(int x) { if (PA_GO_ENABLED()) PA_GO(x); PA_STOP(); return PA_GO_ENABLED(); }
C
cat >ub.c <<'C'
#include "b.h"
int ub(int x) { if (PB_GO_ENABLED()) PB_GO(x); return PB_GO_ENABLED(); }
C
cat >m2.c <<'C'
int ua(int); int ub(int);
int main(void) { return ua(1) + ub(2); }
C
for f in ua ub m2; do gcc -I"$SDT_INC" -I. -O2 -fPIC -c $f.c -o $f.o; done
"$DTRACE" -G -s a.d -o pa1.o ua.o
"$DTRACE" -G -s a.d -o pa2.o ua.o
"$DTRACE" -G -s b.d -o pb.o ub.o
for ld in bfd gold lld; do
	gcc -fuse-ld=$ld -pie -Wl,--gc-sections m2.o ua.o ub.o pa1.o pa2.o pb.o -o m2-$ld ||
		fail "$ld: two -G objects for one provider plus another do not link"
	./m2-$ld || fail "$ld: program failed"
	expect_eq "$(nm m2-$ld | grep -c ' pa_go_semaphore$')" 1 "$ld: one pa_go_semaphore"
	expect_eq "$(readelf -n m2-$ld | grep -c '^ *usdtkit ')" 3 "$ld: metadata notes kept"
	# Every note names its semaphore, and it is the symbol's address.
	for s in pa_go pb_go; do
		addr=$(nm m2-$ld | awk -v s=${s}_semaphore '$3 == s {print $1}')
		[ -n "$addr" ] || fail "$ld: no ${s}_semaphore"
		readelf -n m2-$ld | grep -q "Semaphore: 0x0*$addr\$" || fail "$ld: no note uses ${s}_semaphore"
	done
	echo "ok: link with $ld"
done

# --- PIE and shared library: no text relocations, no executable stack ---
gcc -shared ua.o pa1.o -o libua.so
gcc -pie m2.o ub.o pb.o -L. -lua -Wl,-rpath,"$PWD" -o m2-so
./m2-so || fail "program with a -G shared library failed"
for f in libua.so m2-so m2-bfd; do
	! readelf -d $f | grep -q TEXTREL || fail "$f has text relocations"
	readelf -lW $f | grep GNU_STACK | grep -qv RWE || fail "$f has an executable stack"
	readelf -lW $f | grep -q GNU_STACK || fail "$f has no GNU_STACK"
done
for f in pa1.o pb.o noprov.o; do
	readelf -SW $f | grep -q '\.note\.GNU-stack' || fail "$f has no .note.GNU-stack"
	readelf -SW $f | grep '\.note\.GNU-stack' | grep -qv ' X' || fail "$f: executable .note.GNU-stack"
done
echo "ok: no TEXTREL, no executable stack"

# --- concurrent runs in one directory: same output and separate outputs ---
before=$(listing)
for i in 1 2 3; do
	"$DTRACE" -G -s a.d -o same.o ua.o 2>c$i.err &
	"$DTRACE" -G -s a.d -o sep$i.o ua.o 2>s$i.err &
done
rc=0
for j in $(jobs -p); do wait "$j" || rc=1; done
[ $rc -eq 0 ] || { cat c*.err s*.err >&2; fail "concurrent runs failed"; }
for f in same.o sep1.o sep2.o sep3.o; do
	cmp -s $f pa1.o || fail "concurrent run: $f differs from a lone run's output"
done
rm -f same.o sep?.o c?.err s?.err
expect_eq "$(listing)" "$before" "files left in the directory by concurrent runs"
expect_eq "$(ls -A "$TMPDIR")" "" "temporary files left in TMPDIR"
echo "ok: concurrent runs"

# --- failure: no output, nothing new in the directory or TMPDIR ---
before=$(listing)
rc=0
CC=false "$DTRACE" -G -s a.d -o fail.o ua.o 2>fail.err || rc=$?
[ $rc -eq 1 ] || fail "a failing compiler gave exit status $rc"
rm fail.err
expect_eq "$(listing)" "$before" "files left after a failed compile"
expect_eq "$(ls -A "$TMPDIR")" "" "temporary files left in TMPDIR after a failure"
# A previous output is not replaced by a failed run.
cp pa1.o keep.o
CC=false "$DTRACE" -G -s a.d -o keep.o ua.o 2>/dev/null && fail "a failing compiler succeeded"
cmp -s keep.o pa1.o || fail "a failed run changed the existing output"
# Interrupted while compiling: nothing left behind either.
cat >slowcc <<'SH'
#!/bin/sh
sleep 2
exec cc "$@"
SH
chmod +x slowcc
before=$(listing)
CC=$PWD/slowcc "$DTRACE" -G -s a.d -o int.o ua.o 2>/dev/null &
pid=$!
wait_until 10 "dtrace -G to start the (slow) compiler" pgrep -P "$pid"
kill -TERM $pid
wait $pid && fail "an interrupted run succeeded"
expect_eq "$(listing)" "$before" "files left after an interrupted run"
expect_eq "$(ls -A "$TMPDIR")" "" "temporary files left in TMPDIR after an interrupted run"
echo "ok: failures leave nothing"

# A destination that is not a regular file is written in place, never
# renamed over: `-o /dev/null` once turned this machine's /dev/null into a
# regular file. A FIFO (its reader gets the object) and a null device of
# the test's own (mknod: the real one is not put at risk), for -G and -h.
mkfifo fifo.o
cat fifo.o >got.o &
reader=$!
"$DTRACE" -G -s a.d -o fifo.o ua.o || fail "dtrace -G -o FIFO failed"
[ -p fifo.o ] || { kill "$reader"; fail "dtrace -G replaced a FIFO destination"; }
wait "$reader"
readelf -h got.o >/dev/null 2>&1 || fail "dtrace -G wrote no object into the FIFO"
mknod null c 1 3 || fail "mknod (root) failed"
"$DTRACE" -G -s a.d -o null ua.o || fail "dtrace -G -o a null device failed"
[ -c null ] || fail "dtrace -G replaced a character device destination"
"$DTRACE" -h -s a.d -o null || fail "dtrace -h -o a null device failed"
[ -c null ] || fail "dtrace -h replaced a character device destination"
rm -f null fifo.o got.o
echo "ok: a FIFO or a device as -o is written, not replaced"
