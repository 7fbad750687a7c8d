/*
 * Basic shapes: strings with every spacing, comments everywhere, __ in
 * names, named and unnamed parameters, pointers to anything, unsigned and
 * long long spellings, CamelCase, keyword parameter names, a space before
 * the parameter list, and a probe without arguments.
 */
provider basic {
	/** Javadoc-style: @param q the query text */
	probe query__start(const char *q);
	probe query__done(char* q, int rows, char *  err);
	probe string_arg(string s, const char * const t);
	probe mixed_name__with__parts(int, int count, unsigned);
	probe noargs();
	probe void_args(void);
	probe spaced (int a, long b);
	probe ptrs(void *, const void *p, uint16_t *, float *, double *, char **argv);
	probe ints(unsigned int, unsigned long, long long int, const int, unsigned char, short);
	probe keywords(int class, char *new, int errno, void *self, int string);
	probe /* comment */ commented(int /* between */ a, /* before */ char *b /* after */);
	probe AllocObject__entry(int pid, char *cls);
	probe monitor__notifyAll(long id);
};
