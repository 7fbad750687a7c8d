# 1 "orig.d"
# 1 "<built-in>"
# 1 "orig.d"
typedef struct conn { int fd; char *name; } conn_t;
typedef unsigned int myint;
enum color { RED, GREEN = 5, BLUE = (1 << 3) };

# 10 "orig.d"
provider  Xserver {
  probe client__connect(conn_t *c, myint, enum color, string s, long long int x, unsigned, const int ci, float *fp, double d);
  probe bad(undeclared_t x);
};
BEGIN { printf("hi }"); }
syscall::read:entry /pid == $target/ { @[probefunc] = count(); }
translator conninfo_t < conn_t *c > { fd = c->fd; };
inline int FOO = 3;
#pragma D option quiet
