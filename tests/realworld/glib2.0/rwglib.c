/*
 * The glib2.0 workload (t-glib2.0.sh): calls into the GLib and GObject just
 * built that fire their probes with arguments known here, and prints, in the
 * order the probes fire, the line the bpftrace script prints for each, so
 * that the test compares the two. Then it stays alive (dtrace -l -p reads
 * it) until killed, at most 60 s.
 */
#include <glib-object.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	GQuark q;
	void *mem;
	GType t;
	GObject *obj;
	GSource *src;

	q = g_quark_from_string("rw-quark-string");
	printf("quark_new rw-quark-string %u\n", q);
	mem = g_malloc(12345);
	printf("mem_alloc %lu 12345 0 0\n", (unsigned long)mem);
	g_free(mem);
	printf("mem_free %lu\n", (unsigned long)mem);
	t = g_type_register_static_simple(G_TYPE_OBJECT, "RwObject", sizeof(GObjectClass), NULL,
					  sizeof(GObject), NULL, 0);
	printf("type_new RwObject %lu %lu\n", (unsigned long)G_TYPE_OBJECT, (unsigned long)t);
	obj = g_object_new(t, NULL);
	printf("object_new %lu %lu\n", (unsigned long)obj, (unsigned long)t);
	src = g_idle_source_new();
	g_source_set_name(src, "rw-source-name");
	printf("source_set_name %lu rw-source-name\n", (unsigned long)src);
	g_source_unref(src);
	g_object_unref(obj);
	printf("done\n");
	fflush(stdout);
	sleep(60);
	return 0;
}
