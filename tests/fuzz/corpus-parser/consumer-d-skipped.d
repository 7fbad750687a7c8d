#pragma D option quiet
#pragma D depends_on provider io
#pragma D depends_on library net.d
typedef struct conn conn_t;
typedef struct conninfo { int ci_fd; string ci_name; } conninfo_t;
translator conninfo_t < conn_t *c > {
	ci_fd = *(int *)copyin((uintptr_t)&c->fd, sizeof (int));
	ci_name = c->name == NULL ? "<none>" : copyinstr((uintptr_t)c->name);
};
inline int MAX_CONNS = 1024;
inline string state_names[int s] = s == 0 ? "idle" : "busy";
provider cons {
	probe accept(conn_t *c) : (conninfo_t *c);
};
self int depth;
this string label;
cons*:::accept
/xlate <conninfo_t *>(args[0])->ci_fd > 2/
{
	self->depth++;
	printf("%s {%d}\n", "}", '}');
}
BEGIN, END { exit(0); }
