#!/bin/bash
# DTrace's network and path subroutines and its D library's network types
# (issue 35, the funcs tests): htons/htonl/htonll/ntohs/ntohl/ntohll,
# getmajor/getminor, inet_ntoa, inet_ntoa6 (both forms of the second
# argument), inet_ntop with a constant and a run-time address family,
# link_ntop, cleanpath, lltostr below strsize 32, strtok's faults, and
# an associative array of a struct. ipaddr_t, struct in_addr, struct
# in6_addr, AF_INET, ARPHRD_ETHER... come from usdtkit's D library
# (dtrace/consumer/dlib.c), no declaration in the scripts, and a
# script's own declaration of one of those names wins. Every expected
# value is worked out by hand from the address bytes, RFC 5952's text
# forms as DTrace writes them and Linux's dev_t (major above 20 bits).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine

cat >"$T/swap.d" <<'D'
BEGIN
{
	printf("%x %x %x\n", htons(0x1122), htonl(0x11223344), htonll(0x1122334455667788));
	printf("%x %x %x\n", ntohs(0xa1b2c3d4), ntohl(0x0102030405060708), ntohll(0xff));
	printf("%x %x\n", getmajor(0xabcdef0123456789), getminor(0xabcdef0123456789));
	exit(0);
}
D
dt 0 -q -s "$T/swap.d"
# the low 2, 4, 8 bytes reversed; dev_t 0x23456789: major 0x234, minor 0x56789
same "$T/out" "2211 44332211 8877665544332211\nd4c3 8070605 ff00000000000000\n234 56789\n\n" \
	"byte swaps and dev_t halves"

cat >"$T/inet.d" <<'D'
ipaddr_t *ip4;
struct in_addr *in4;
struct in6_addr *ip6;
BEGIN
{
	ip4 = alloca(sizeof(ipaddr_t));
	in4 = alloca(sizeof(struct in_addr));
	ip6 = alloca(sizeof(struct in6_addr));
	*ip4 = htonl(0x0a000102);
	in4->s_addr = htonl(0xc0a80017);
	printf("%s %s %d %d\n", inet_ntoa(ip4), inet_ntop(AF_INET, in4), sizeof(struct in6_addr),
	    AF_INET6);
	ip6->in6_u.u6_addr8[0] = 0x20;
	ip6->in6_u.u6_addr8[1] = 0x01;
	ip6->in6_u.u6_addr8[2] = 0x0d;
	ip6->in6_u.u6_addr8[3] = 0xb8;
	ip6->in6_u.u6_addr8[15] = 0x01;
	printf("%s\n", inet_ntoa6(ip6));
	ip6->in6_u.u6_addr8[9] = 0x05;
	printf("%s\n", inet_ntop(AF_INET6, ip6));
	ip6->in6_u.u6_addr32[0] = 0;
	ip6->in6_u.u6_addr32[1] = 0;
	ip6->in6_u.u6_addr32[2] = htonl(0xffff);
	ip6->in6_u.u6_addr32[3] = htonl(0x7f000001);
	af = AF_INET6;
	printf("%s %s %s\n", inet_ntoa6(ip6), inet_ntoa6(ip6, 1), inet_ntop(af, ip6));
	ip6->in6_u.u6_addr32[2] = 0;
	printf("%s %s\n", inet_ntoa6(ip6, 0), inet_ntoa6(ip6, 7));
	ip6->in6_u.u6_addr32[3] = htonl(1);
	printf("%s\n", inet_ntoa6(ip6));
	exit(0);
}
D
dt 0 -q -s "$T/inet.d"
# 2001:db8:0:0:0:0:0:1 -> the run of 5 zero groups is "::"; with byte 9
# set, 2001:db8:0:0:5:0:0:1 has two runs of two: the first is "::";
# ::ffff:127.0.0.1 is IPv4-mapped: its quad alone unless strict; ::127.0.0.1
# compatible, the same; ::1 is neither.
same "$T/out" "10.0.1.2 192.168.0.23 16 10\n2001:db8::1\n2001:db8::5:0:0:1\n127.0.0.1 ::ffff:127.0.0.1 ::ffff:127.0.0.1\n127.0.0.1 ::127.0.0.1\n::1\n\n" \
	"inet_ntoa, inet_ntoa6, inet_ntop"

cat >"$T/link.d" <<'D'
uint8_t ib[20];
BEGIN
{
	this->e = (uint64_t *)alloca(sizeof(uint64_t));
	*(this->e) = htonll(0x0a1b2c3d4e5f << 16);
	printf("%s\n", link_ntop(ARPHRD_ETHER, this->e));
	ib[0] = 0xfe;
	ib[19] = 0x01;
	t = ARPHRD_INFINIBAND;
	printf("%s\n", link_ntop(t, ib));
	exit(0);
}
D
dt 0 -q -s "$T/link.d"
same "$T/out" "0a:1b:2c:3d:4e:5f\nfe:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:01\n\n" \
	"link_ntop"

# a family inet_ntop does not know is an illegal operation (ERROR fires)
dt 0 -q -n 'BEGIN { trace(inet_ntop(99, alloca(16))); exit(1); } ERROR { printf("fault %d\n", arg4); exit(0); }'
same "$T/out" "fault 3\n\n" "inet_ntop of an unknown family"

# the script's own declarations of the library's names win
cat >"$T/own.d" <<'D'
typedef uint64_t ipaddr_t;
struct in_addr { uint8_t b[4]; uint8_t more[4]; };
inline int AF_INET = 77;
BEGIN
{
	printf("%d %d %d %d\n", sizeof(ipaddr_t), sizeof(struct in_addr), AF_INET, ARPHRD_ETHER);
	exit(0);
}
D
dt 0 -q -s "$T/own.d"
same "$T/out" "8 8 77 1\n\n" "a script's declarations over the D library's"
dt 0 -q -n 'enum proto { IPPROTO_TCP = 99 }; BEGIN { printf("%d %d\n", IPPROTO_TCP, IPPROTO_UDP); exit(0); }'
same "$T/out" "99 17\n\n" "a script's enumerator over the D library's constant"

cat >"$T/clean.d" <<'D'
BEGIN
{
	printf("[%s] [%s] [%s] [%s]\n", cleanpath("/a//b/./c/"), cleanpath("a/../../b"),
	    cleanpath("/x/y/../../.."), cleanpath("./"));
	exit(0);
}
D
dt 0 -q -s "$T/clean.d"
same "$T/out" "[/a/b/c] [../b] [/] [.]\n\n" "cleanpath"

cat >"$T/ll.d" <<'D'
#pragma D option strsize=5
BEGIN
{
	printf("%s %s %s\n", lltostr(42), lltostr(123456789), lltostr(-98765));
	exit(0);
}
D
dt 0 -q -s "$T/ll.d"
same "$T/out" "42 12345 -9876\n\n" "lltostr cut at strsize 5"

# strtok: NULL delimiters, a NULL string, and strtok(NULL, d) once the
# string is used up fault (DTrace's invalid address, ERROR fires); the
# faulting clause's output is discarded, the earlier clauses' kept
cat >"$T/tok.d" <<'D'
BEGIN
{
	printf("%s,", strtok("a:b", ":"));
}
BEGIN
{
	printf("%s,", strtok(NULL, ":"));
}
BEGIN
{
	trace(strtok(NULL, ":"));
	exit(1);
}
ERROR
{
	printf("fault %d\n", arg4);
	exit(0);
}
D
dt 0 -q -s "$T/tok.d"
same "$T/out" "a,b,fault 1\n\n" "strtok(NULL) after the last token"
# in the clause that used the string up, strtok(NULL, d) is NULL
dt 0 -q -n 'BEGIN { x = strtok("ab", ":"); printf("%s %s\n", x, strtok(NULL, ":") == NULL ? "null" : "?"); exit(0); }'
same "$T/out" "ab null\n\n" "strtok(NULL) in the clause that used the string up"
dt 0 -q -n 'BEGIN { trace(strtok("abc", NULL)); exit(1); } ERROR { printf("fault %d\n", arg4); exit(0); }'
same "$T/out" "fault 1\n\n" "strtok with NULL delimiters"
dt 0 -q -n 'BEGIN { trace(strtok(strstr("abc", "x"), ",")); exit(1); } ERROR { printf("fault %d\n", arg4); exit(0); }'
same "$T/out" "fault 1\n\n" "strtok of a NULL string"

cat >"$T/assoc.d" <<'D'
struct { int n; string s; } cmd[int];
BEGIN
{
	cmd[1].n = 7;
	cmd[1].s = "seven";
	cmd[2].n = 9;
	printf("%d %s %d [%s] %d\n", cmd[1].n, cmd[1].s, cmd[2].n, cmd[2].s, cmd[3].n);
	exit(0);
}
D
dt 0 -q -s "$T/assoc.d"
same "$T/out" "7 seven 9 [] 0\n\n" "an associative array of a struct"

# inet_ntoa6's prototype, as DTrace's: a pointer to struct in6_addr (or
# in6_addr_t), then an integer constant
refused_tag D_PROTO_ARG 'inet_ntoa6( ) argument #1 is incompatible with prototype:' \
	'BEGIN { trace(inet_ntoa6((int *)alloca(16))); }'
refused_tag D_PROTO_ARG 'inet_ntoa6( ) argument #2 is incompatible with prototype:' \
	'BEGIN { n = 1; trace(inet_ntoa6((struct in6_addr *)alloca(16), n)); }'
dt 0 -q -n 'BEGIN { trace(inet_ntoa6((in6_addr_t *)alloca(16), 1)); exit(0); }'
same "$T/out" "::\n" "inet_ntoa6 of an in6_addr_t"

# index/rindex of an empty string: where the search starts, within the string
dt 0 -q -n 'BEGIN { printf("%d %d %d %d\n", index("foobar", "", 400), index("foobar", "", 2), rindex("foobar", "", -1), rindex("foobar", "", 3)); exit(0); }'
same "$T/out" "6 2 0 3\n\n" "index and rindex of an empty string"

# a tick- firing (NMI context) that stores many array elements keeps them all
cat >"$T/nmi.d" <<'D'
tick-1ms
/n == 0/
{
	a[1] = "x1"; a[2] = "x2"; a[3] = "x3"; a[4] = "x4"; a[5] = "x5"; a[6] = "x6";
	b[1] = 1; b[2] = 2; b[3] = 3; b[4] = 4; b[5] = 5; b[6] = 6; b[7] = 7; b[8] = 8;
	n = 1;
}
tick-1ms
/n == 1/
{
	printf("%s %s %s %s %s %s", a[1], a[2], a[3], a[4], a[5], a[6]);
	printf(" %d %d %d %d %d %d %d %d\n", b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8]);
	exit(0);
}
D
dt 0 -q -s "$T/nmi.d"
same "$T/out" "x1 x2 x3 x4 x5 x6 1 2 3 4 5 6 7 8\n\n" "array elements stored in a tick- firing"
