provider kw {
	probe p(char *string, int class, void *new, int errno, long self, int this);
	probe q(string string, int delete, int template, int operator, int typename);
};
