typedef unsigned int u32_t;
typedef struct conn conn_t;
provider rs {
	probe a(const char *, u32_t, conn_t *);
};
provider rs {
	probe a(char const*, unsigned int, conn_t*);
	probe b();
};
