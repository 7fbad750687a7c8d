typedef struct opaque opaque_t;
provider ptr {
	probe p(void *, int **, uint16_t *, const void *v, float *, double *);
	probe q(opaque_t *, opaque_t **, char ***, const char **, unsigned char *, void * const);
	probe r(char *const *, const char *const s);
};
