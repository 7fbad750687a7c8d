/*
 * The plugin library's own provider. dtrace -G builds an object that is
 * linked into libplugin.so: the library has its own semaphores and registers
 * its probes when it is loaded (dlopen), and unregisters them at dlclose.
 */
provider plugin {
	/* The host loaded us: the plugin's name and its version. */
	probe loaded(char *name, int version);
	/* One item processed: its name, its position, the work it cost. */
	probe item(char *name, int index, unsigned long cost);
	/* A checksum of the whole batch: costly, so computed only while traced. */
	probe batch__digest(char *hex);
};
