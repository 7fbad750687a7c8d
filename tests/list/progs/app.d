/*
 * The listed program's provider. Every probe but declared__unused has a site
 * in app.c; inlined__site's sites are inside a static inline function.
 */
provider ltapp {
	probe request__start(int id, const char *path);
	probe request__done(int id, long status) : (long status, int id);
	probe inlined__site(unsigned int n);
	probe no_args();
	probe declared__unused(int);
};

#pragma D attributes Evolving/Evolving/Common provider ltapp provider
#pragma D attributes Evolving/Evolving/Common provider ltapp module
#pragma D attributes Evolving/Evolving/Common provider ltapp function
#pragma D attributes Stable/Evolving/ISA provider ltapp name
#pragma D attributes Stable/Stable/Common provider ltapp args
