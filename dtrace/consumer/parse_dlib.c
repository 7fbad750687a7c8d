/* SPDX-License-Identifier: MIT */
/*
 * usdtkit's D library, its net.d (its procfs.d, sched.d and regs.d are
 * dlib.c's, parsed with translators by parse.c's library(); one library,
 * two loaders, to be made one): the types and constants DTrace's programs
 * use without declaring them, which DTrace takes from its D library (net.d)
 * and the kernel's types: ipaddr_t, struct in_addr, struct in6_addr
 * (in6_addr_t), and the constants AF_*, IPPROTO_* and ARPHRD_*. They are
 * declared here as D, so they need no kernel BTF, and read by the
 * parser's own functions into the program's declarations before the
 * program (its source marked `library`). A program's own declaration of
 * one of these names wins: the library's is hidden where the program
 * declares it (parse_decl.c), and a library constant is found only when
 * no inline or enumerator of the program has its name (parse_expr.c).
 * The layouts are the kernel's (include/uapi/linux/in.h, in6.h), the
 * values Linux's (socket.h, in.h, if_arp.h).
 *
 * Layers: under parse_expr.c and parse.c, over parse_decl.c.
 */
#include <string.h>

#include "parse.h"

static const char net_d[] =
    "typedef uint32_t ipaddr_t;\n"
    "struct in_addr { ipaddr_t s_addr; };\n"
    "struct in6_addr {\n"
    "	union { uint8_t u6_addr8[16]; uint16_t u6_addr16[8]; uint32_t u6_addr32[4]; } in6_u;\n"
    "};\n"
    "typedef struct in6_addr in6_addr_t;\n";

static const struct dt_src net_src = {
    .file = "net.d (usdtkit's D library)",
    .text = net_d,
    .what = "failed to compile the D library net.d",
    .library = true,
};

static const struct {
	const char *name;
	int value;
} consts[] = {
    {"AF_UNSPEC", 0},	       {"AF_UNIX", 1},		 {"AF_INET", 2},
    {"AF_INET6", 10},	       {"AF_PACKET", 17},	 {"IPPROTO_IP", 0},
    {"IPPROTO_ICMP", 1},       {"IPPROTO_IGMP", 2},	 {"IPPROTO_IPIP", 4},
    {"IPPROTO_TCP", 6},	       {"IPPROTO_EGP", 8},	 {"IPPROTO_PUP", 12},
    {"IPPROTO_UDP", 17},       {"IPPROTO_IDP", 22},	 {"IPPROTO_TP", 29},
    {"IPPROTO_DCCP", 33},      {"IPPROTO_IPV6", 41},	 {"IPPROTO_RSVP", 46},
    {"IPPROTO_GRE", 47},       {"IPPROTO_ESP", 50},	 {"IPPROTO_AH", 51},
    {"IPPROTO_ICMPV6", 58},    {"IPPROTO_MTP", 92},	 {"IPPROTO_BEETPH", 94},
    {"IPPROTO_ENCAP", 98},     {"IPPROTO_PIM", 103},	 {"IPPROTO_COMP", 108},
    {"IPPROTO_SCTP", 132},     {"IPPROTO_UDPLITE", 136}, {"IPPROTO_MPLS", 137},
    {"IPPROTO_RAW", 255},      {"ARPHRD_NETROM", 0},	 {"ARPHRD_ETHER", 1},
    {"ARPHRD_EETHER", 2},      {"ARPHRD_AX25", 3},	 {"ARPHRD_PRONET", 4},
    {"ARPHRD_CHAOS", 5},       {"ARPHRD_IEEE802", 6},	 {"ARPHRD_ARCNET", 7},
    {"ARPHRD_APPLETLK", 8},    {"ARPHRD_DLCI", 15},	 {"ARPHRD_ATM", 19},
    {"ARPHRD_METRICOM", 23},   {"ARPHRD_IEEE1394", 24},	 {"ARPHRD_EUI64", 27},
    {"ARPHRD_INFINIBAND", 32}, {"ARPHRD_LOOPBACK", 772}, {"ARPHRD_NONE", 0xfffe},
};

void dt_dlib_load(struct parser *ps)
{
	struct parser lp;
	size_t i;

	for (i = 0; i < ps->prog->ndecls; i++)
		if (ps->prog->decls[i].pos.src == &net_src)
			return; /* once a program */
	memset(&lp, 0, sizeof(lp));
	lp.prog = ps->prog;
	lp.diag = ps->diag;
	lp.nanon = 1000; /* its unnamed types' names are not the program's */
	dt_lex_init(&lp.lx, &net_src, ps->prog->o, ps->diag);
	dt_parse_next(&lp);
	while (!lp.failed && lp.lx.tok != T_EOF) {
		bool td = dt_lex_is_word(&lp.lx, "typedef");
		char *ty;

		if (td)
			dt_parse_next(&lp);
		ty = dt_parse_type(&lp);
		if (!ty)
			break;
		if (td)
			dt_parse_declarators(&lp, 'T', ty);
		dt_free(ty);
		dt_parse_expect(&lp, ";", "after the declaration");
	}
	dt_free(lp.lx.text);
	ps->failed |= lp.failed;
}

struct dt_node *dt_dlib_const(struct parser *ps, const char *name)
{
	struct dt_node *c, *n;
	size_t i;

	for (i = 0; i < sizeof(consts) / sizeof(consts[0]); i++)
		if (!strcmp(consts[i].name, name))
			break;
	if (i == sizeof(consts) / sizeof(consts[0]))
		return NULL;
	n = dt_parse_node(ps, N_INT);
	n->ival = consts[i].value;
	n->size = 4;
	n->type = TY_INT;
	c = dt_parse_node(ps, N_CAST); /* as `inline int NAME = value;` */
	c->name = dt_xstrdup("int");
	c->a = n;
	return c;
}
