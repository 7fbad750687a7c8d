provider dup {
	probe start(int, char *);
};
provider dup {
	probe start(long);
};
typedef struct one one_t;
typedef struct two two_t;
provider duptwo {
	probe p(one_t *);
};
provider duptwo {
	probe p(two_t *);
};
