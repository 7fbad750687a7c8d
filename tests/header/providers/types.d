/* Types declared in the .d, undeclared system types, translated arguments, pragmas. */
#pragma D attributes Evolving/Evolving/Common provider typed provider
typedef struct conn conn_t;
typedef struct {
	int fd;
	union {
		int a;
		long b;
	};
} anon_t;
struct request {
	int id;
	char *path;
};
enum color { RED = 1, GREEN, BLUE = 10 };
typedef unsigned long long counter_t;
typedef char *str_t;

provider typed {
	probe sizes(uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, uint64_t, int64_t);
	probe sys(size_t, ssize_t, uintptr_t, intptr_t, uintmax_t, pid_t, off_t, bool);
	probe decl(conn_t *c, anon_t *a, struct request *r, enum color c2, counter_t n, str_t s);
	probe xlate(conn_t *c, int n) : (conn_t *c, int n, int n);
	probe floats(float, double);
};
#pragma  D attributes  Stable/Stable/Common   provider typed   args
#pragma D attributes Private/Private/Unknown provider typed function
