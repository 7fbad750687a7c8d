#!/bin/bash
# The metadata note of real `dtrace -G` runs, parsed from .d files: names,
# native and translated argument types, the argument mapping, and
# `#pragma D attributes`; read back from the object and from a linked program
# holding two -G objects. The expected text is written from the .d below.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
META_DUMP="$USDTKIT_BUILDDIR/tests/link/meta_dump"
cd "$T"
cat >m.d <<'D'
typedef struct conn conn_t;
provider meta {
	probe place(int i, int j) : (int j, int i, int i, int j);
	probe query__start(const char *sql, conn_t *c, uint64_t id);
	probe bare(string, unsigned char);
	probe none();
};
#pragma D attributes Evolving/Evolving/ISA provider meta provider
#pragma D attributes Stable/Unstable/Common provider meta args
D
"$DTRACE" -G -s m.d -o m.o || fail "-G failed"
"$META_DUMP" m.o >dump || { cat dump >&2; fail "metadata note rejected"; }
cat >want <<'W'
note 0
provider meta
  attributes provider Evolving/Evolving/ISA
  attributes module Private/Private/Unknown
  attributes function Private/Private/Unknown
  attributes name Private/Private/Unknown
  attributes args Stable/Unstable/Common
  probe place args 2 xargs 4
    arg 0 from 0 "int" c "int" integer size 4 signed name i
    arg 1 from 1 "int" c "int" integer size 4 signed name j
    xarg 0 from 1 "int" c "int" integer size 4 signed name j
    xarg 1 from 0 "int" c "int" integer size 4 signed name i
    xarg 2 from 0 "int" c "int" integer size 4 signed name i
    xarg 3 from 1 "int" c "int" integer size 4 signed name j
  probe query__start args 3 xargs 3
W
# The remaining lines depend on how the parser spells and classifies types;
# check their shape and the facts the .d fixes, not every byte.
head -n "$(wc -l <want)" dump >head
diff -u want head || fail "metadata of probe 'place' or the attributes differ"
expect_grep '^    arg 0 from 0 "const char \*" c "const char \*" string size 8 unsigned name sql$' dump "query__start arg 0"
expect_grep '^    arg 1 from 1 "conn_t \*" c "[^"]*" pointer size 8 unsigned name c$' dump "query__start arg 1"
expect_grep '^    arg 2 from 2 "uint64_t" c "uint64_t" integer size 8 unsigned name id$' dump "query__start arg 2"
expect_grep '^  probe bare args 2 xargs 2$' dump "bare"
expect_grep '^    arg 0 from 0 "string" c "char \*" string size 8 unsigned name -$' dump "bare arg 0 (D string)"
expect_grep '^    arg 1 from 1 "unsigned char" c "unsigned char" integer size 1 unsigned name -$' dump "bare arg 1"
expect_grep '^  probe none args 0 xargs 0$' dump "none"
echo "ok: object"

# Two -G objects in one program: both notes are there, and both validate.
cat >n.d <<'D'
provider other { probe x(long); };
D
"$DTRACE" -G -s n.d -o n.o
echo 'int main(void) { return 0; }' >main.c
gcc -pie main.c m.o n.o -o prog
"$META_DUMP" prog >pdump || { cat pdump >&2; fail "notes in the linked program rejected"; }
expect_eq "$(grep -c '^note ' pdump)" 2 "notes in the program"
expect_grep '^provider meta$' pdump "program: provider meta"
expect_grep '^provider other$' pdump "program: provider other"
expect_grep '^    arg 0 from 0 "long" c "long" integer size 8 signed name -$' pdump "program: other:x"
echo "ok: linked program"

# Footprint: a 1,011-probe provider shaped like Erlang/OTP's (951 probes with
# the same 10 arguments; bench/footprint/gen.py) costs about 40 bytes of note
# a probe, each distinct argument list being written once (it was 423 bytes
# a probe when every probe carried its own records, twice). Every probe still
# reads back with its 10 named, typed arguments.
mkdir big && python3 "$USDTKIT_SRCDIR/bench/footprint/gen.py" big
"$DTRACE" -G -s big/big.d -o big.o || fail "-G of the large provider"
"$META_DUMP" big.o >bdump || { cat bdump >&2; fail "the large provider's note rejected"; }
expect_eq "$(grep -c '^  probe user_trace__n[0-9]* args 10 xargs 10$' bdump)" 951 "user_trace probes read back"
expect_eq "$(grep -c '^    arg 9 from 9 "char \*" c "char \*" string size 8 unsigned name s4$' bdump)" 951 \
	"user_trace probes' last argument"
size=$(readelf -SW big.o | sed 's/^ *\[ *[0-9]*\] *//' | awk '$1 == ".note.usdtkit" { print $5 }')
[ -n "$size" ] || fail "no .note.usdtkit in the large provider's object"
per=$((16#$size / 1011))
[ "$per" -le 48 ] || fail "the note costs $per bytes a probe (at most 48 expected)"
echo "ok: 1,011 probes, $((16#$size)) bytes of metadata note ($per a probe)"
