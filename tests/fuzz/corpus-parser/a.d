/* A test provider */
#pragma D attributes Evolving/Evolving/Common provider myapp provider
provider myapp {
	/** @param x the thing */
	probe query__start(const char *query, int);
	probe query__done(char* q, uint64_t n, struct foo *f);
	probe v(void);
	probe e();
	probe m(native_t *a) : (char *a);
};
#pragma D attributes Stable/Evolving/ISA provider myapp args
