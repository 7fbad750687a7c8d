#!/bin/sh
# Builds the GLib-like library the way GLib's build does with dtrace: the
# probes header from `dtrace -h`, with its semaphore lines turned into
# #undef by sed, and no `dtrace -G` object at all: probes without
# semaphores, always "enabled".
#   DTRACE, CC, CFLAGS, SDT_CFLAGS from the environment.
set -eu
: "${DTRACE:=dtrace}" "${CC:=cc}" "${CFLAGS:=-O2 -g}"
set -x
"$DTRACE" -h -s glib/glib_probes.d -o glib/glib_probes.h.tmp
sed -e 's,define STAP_HAS_SEMAPHORES 1,undef STAP_HAS_SEMAPHORES,' \
    -e 's,define _SDT_HAS_SEMAPHORES 1,undef _SDT_HAS_SEMAPHORES,' \
    glib/glib_probes.h.tmp >glib/glib_probes.h
rm glib/glib_probes.h.tmp
for f in gmem gquark gmain; do
	$CC $CFLAGS $SDT_CFLAGS -fPIC -DHAVE_DTRACE -Iglib -c glib/$f.c -o glib/$f.o
done
$CC -shared -o glib/libminiglib.so glib/gmem.o glib/gquark.o glib/gmain.o
$CC $CFLAGS -Iglib -o testglib testglib.c glib/libminiglib.so -Wl,-rpath,'$ORIGIN/glib'
