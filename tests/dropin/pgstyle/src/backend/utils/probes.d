/* ----------
 *	probes.d of a PostgreSQL-like server: run through cpp (dtrace -C),
 *	so the server's own type names are macros here.
 * ----------
 */
#define LocalTransactionId unsigned int
#define LWLockMode int
#define LOCKMODE int
#define BlockNumber unsigned int
#define Oid unsigned int
#define bool unsigned char

provider postgresql {
	probe transaction__start(LocalTransactionId);
	probe transaction__commit(LocalTransactionId);

	probe query__start(const char *);
	probe query__done(char *);
	probe query__parse__start(const char *);
	probe statement__status(char*);

	probe lock__wait__start(unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, LOCKMODE);
	probe lock__wait__done(unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, LOCKMODE);

	probe lwlock__acquire(char *, LWLockMode);
	probe buffer__read__done(int, BlockNumber, Oid, Oid, Oid, int, bool);
	probe checkpoint__start(int);
};
