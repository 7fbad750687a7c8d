/* SPDX-License-Identifier: MIT */
/*
 * The probes of the warning patterns (t-warnings.sh), declared with the types the patterns
 * pass, so that the generated header's type checks stay quiet and only <sys/sdt.h> differs.
 */
typedef void (*handler_t)(int);

provider warnpat {
	probe mem__alloc(void *, unsigned int);
	probe mem__free(void *);
	probe mem__realloc(void *, void *, unsigned int, int);
	probe execute__entry(char *, int);
	probe execute__return(char *, int);
	probe request__done(int, char *, long);
	probe values(int, long, int, unsigned char);
	probe flags(unsigned int, int, unsigned int);
	probe buffer(char *, int *, const char *);
	probe callback(handler_t, void *, int);
	probe state(int, int, int);
	probe atomic(int, long, void *);
	probe result(long, int, int);
	probe member(int, const char *, long, unsigned short);
	probe literal(const char *, const char *, const char *);
};
