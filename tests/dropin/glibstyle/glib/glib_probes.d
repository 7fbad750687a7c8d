/* A GLib-like library's provider: memory, quarks, the main loop. */
provider glib {
	probe mem__alloc(void*, unsigned int, unsigned int, unsigned int);
	probe mem__free(void*);
	probe quark__new(const char *, unsigned int);
	probe main__dispatch(char *, void *, int);
	probe main__before__dispatch(char *, void *, void *, void *);
};
