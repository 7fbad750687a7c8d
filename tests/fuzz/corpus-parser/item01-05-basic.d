/*
 * Ordinary provider: char * spellings (item 1), comments (item 2),
 * __ names (item 3), named and unnamed parameters (item 4), pointers (item 5).
 */
provider basic {
	probe query__start(char*, char *q, char * r, const char *s, const char*);
	/** Javadoc style: @param a the first */
	probe mixed_name__here(int /* count */, /* x */ void *x, void **, uint16_t *u);
	probe ptrs(const void *, float *, double *, struct foo **, char **);
};
