struct before { int a; char b; };
typedef struct fwd fwd_t;
typedef struct before *before_p;
typedef struct { long x; short y; } anon_t;
typedef char *cstr_t, **cstrv_t;
typedef uint32_t my32_t;
typedef my32_t nested_t;
union u { int i; double d; struct { char c[3]; } inner; };
enum state { IDLE, BUSY = 5, DONE = BUSY + (2 * 3), LAST };
typedef enum state state_t;
struct outer {
	struct { int p; int q; } anon_member;
	union { long l; char s[16]; };
	uint64_t big;
	struct before nested;
};
provider tds {
	probe t(fwd_t *, before_p, anon_t *, anon_t, cstr_t, cstrv_t, my32_t, nested_t);
	probe s(struct before, struct outer *, struct outer, union u, enum state, state_t, struct after *);
};
struct after { int z; };
