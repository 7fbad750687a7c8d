#!/bin/bash
# D's translators for the program's own types (issue 35, item 1): a
# translator's members computed from its input (a pointer into D's memory,
# an integer, a struct variable, a process's structure through a probe
# argument), `xlate <T>(e).m`, `xlate <T *>(e)->m`, a translation assigned
# to a struct, a member the translator leaves out read as 0, and the errors
# DTrace gives for bad translators, with their tags. Every expected value is
# worked out by hand from the translator's expressions.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine

cat >"$T/x.d" <<'D'
#pragma D option quiet
struct in { int ii; char ic; long l; };
struct out { int oi; char oc; long sum; };
typedef struct out out_t;
translator out_t < struct in *i > { oi = i->ii * 2; oc = i->ic; sum = i->ii + i->l; };
translator struct out < int v > { oi = v + 1; sum = v * v; };
translator struct in < struct out o > { ii = o.oi - 1; ic = o.oc; };
struct in *p;
struct out g;
BEGIN
{
	p = alloca(sizeof(struct in));
	p->ii = 21; p->ic = 'x'; p->l = 100;
	printf("%d %c %d\n", xlate<out_t *>(p)->oi, xlate<struct out *>(p)->oc, xlate<struct out>(p).sum);
	printf("%d %d %d\n", xlate<struct out>(7).oi, xlate<struct out>(-3).sum, xlate<struct out>(3).oc);
	this->o = xlate<struct out>(p);
	g = xlate<struct out>(5);
	g.oc = 'k';
	printf("%d %c %d | %d %d | %d %c\n", this->o.oi, this->o.oc, this->o.sum, g.oi, g.sum,
	    xlate<struct in>(g).ii, xlate<struct in>(g).ic);
	exit(0);
}
D
dt 0 -s "$T/x.d"
# through p: 21 * 2, 'x', 21 + 100; of the integer 7: 8; of -3: 9; oc is
# not translated from an integer: 0; this->o takes p's three members; g
# from 5: 6 and 25, then oc set; back from g: 6 - 1 and 'k'.
same "$T/out" "42 x 121\n8 9 0\n42 x 121 | 6 25 | 5 k\n\n" "translations in D's memory"

# A process's structure through the probe's pointer argument.
mkdir -p "$T/u" || fail "no scratch directory"
cd "$T/u" || fail "no scratch directory"
cat >xl.d <<'D'
provider xl {
	probe rec(void *);
};
D
cat >xl.c <<'C'
#include "xl_probes.h"
struct pt {
	int x;
	long y;
};
int main(void)
{
	static struct pt v[2] = {{-3, 1000}, {7, -2}};

	for (int i = 0; i < 2; i++)
		XL_REC(&v[i]);
	return 0;
}
C
if ! { "$DTRACE" -h -s xl.d -o xl_probes.h && cc -O2 -I"$SDT_INC" -I. -c xl.c -o xl.o &&
	"$DTRACE" -G -s xl.d -o prov.o xl.o && cc -o xl xl.o prov.o; }; then
	fail "building the probe program"
fi
cat >u.d <<'D'
struct pt { int x; long y; };
struct view { long total; int neg; };
translator struct view < struct pt *p > { total = p->x + p->y; neg = p->x < 0; };
xl$target:::rec
{
	printf("%d %d\n", xlate<struct view *>((struct pt *)arg0)->total,
	    xlate<struct view>((struct pt *)arg0).neg);
}
D
dt 0 -q -s u.d -c ./xl
same "$T/out" "997 1\n5 0\n\n" "a process's structure translated"
cd "$T" || fail "no scratch directory"

# What DTrace refuses, with its tags (refused_tag: tests/consumer/lib.sh).
S='struct i { int a; char c; }; struct o { int b; char *s; };'
refused_tag D_XLATE_SOU "translator output type must be a struct or union" "$S translator int < struct i *p > { };"
refused_tag D_XLATE_SOU "incomplete struct/union/enum struct nope" "$S translator struct nope < struct i *p > { };"
refused_tag D_XLATE_MEMB "translator member z is not a member of struct o" "$S translator struct o < struct i *p > { z = p->a; };"
refused_tag D_XLATE_INCOMPAT 'translator member s definition uses incompatible types: "char *" = "char"' "$S translator struct o < struct i *p > { s = p->c; };"
refused_tag D_TYPE_MEMBER "q is not a member of struct i" "$S translator struct o < struct i *p > { b = p->q; };"
refused_tag D_XLATE_REDECL "translator from struct i * to struct o has already been declared" "$S translator struct o < struct i *p > { }; translator struct o < struct i *q > { };"
refused_tag D_XLATE_NONE 'cannot translate from "struct i" to "struct o"' "$S translator struct o < struct i *p > { b = p->a; }; struct i v; BEGIN { trace(xlate<struct o>(v).b); }"
refused_tag D_CAST_INVAL 'invalid cast expression: "pointer to translated data" to "uintptr_t"' "$S translator struct o < struct i *p > { b = p->a; }; struct i *v; BEGIN { trace((uintptr_t)xlate<struct o *>(v)); }"
refused_tag D_OP_PTR "operator -> must be applied to a pointer" "$S translator struct o < struct i *p > { b = p->a; }; struct i *v; BEGIN { trace(xlate<struct o>(v)->b); }"
# DTrace's own translators (t-consumer-procfs) take a struct task_struct *, nothing else.
refused_tag D_XLATE_NONE 'cannot translate from "struct i" to "struct psinfo"' "$S struct i v; BEGIN { trace(xlate<psinfo_t>(v).pr_pid); }"
echo "ok: D's translators"
