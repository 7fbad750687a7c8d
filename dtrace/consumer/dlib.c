/* SPDX-License-Identifier: MIT */
/*
 * DTrace's own D library, the part every D program sees without declaring
 * it (DTrace's procfs.d, sched.d, regs.d and net.d): the process model's
 * types (psinfo_t, lwpsinfo_t: Solaris proc(4)'s, as DTrace for Linux
 * keeps them), cpuinfo_t, their constants, the registers' indexes for
 * uregs[], curpsinfo and curlwpsinfo, the translations of curthread, and
 * the network's types (ipaddr_t, struct in_addr, struct in6_addr,
 * in6_addr_t) and constants (AF_*, IPPROTO_*, ARPHRD_*).
 *
 * Theory. The library is D text, parsed before each program's own by the
 * same parser (parse.c, dt_parse()): its types are declarations like a
 * program's, its constants and curpsinfo/curlwpsinfo inlines, so it needs
 * no kernel BTF. Its source is marked `library`: a program's own
 * declaration of one of its names wins (the library's typedef, struct,
 * union or inline of that name is hidden, parse_decl.c's library_yields(),
 * parse.c's inlines) instead of being refused as a redeclaration. The
 * network's layouts are the kernel's (include/uapi/linux/in.h, in6.h), its
 * values Linux's (socket.h, in.h, if_arp.h). Only the two translators are
 * not D: DTrace writes them in D over struct task_struct,
 * a kernel type; here they are builtin (struct dt_xlator's `builtin`), and
 * a member they define is lowered by parse_xlate.c to N_KTASK, which the
 * engine computes from the task's fields at the offsets the running
 * kernel's BTF gives (dtrace/engine/codegen_procfs.c). Which members they
 * define is the table below: DTrace for Linux's, and the argument members
 * DTrace for Linux leaves out (pr_psargs, pr_argc, pr_argv, pr_envp: its
 * tests of them are marked as expected to fail); any other member is
 * DTrace's D_XLATE_NOCONV.
 */
#include <string.h>

#include "dlib.h"

const char dt_dlib_name[] = "<DTrace's D library>";

const char dt_dlib_types[] =
    "typedef struct timestruc { time_t tv_sec; long tv_nsec; } timestruc_t;\n"
    "typedef id_t psetid_t;\n"
    "typedef id_t chipid_t;\n"
    "typedef id_t lgrp_id_t;\n"
    "typedef struct cpuinfo {\n"
    "	processorid_t cpu_id; psetid_t cpu_pset; chipid_t cpu_chip; lgrp_id_t cpu_lgrp;\n"
    "} cpuinfo_t;\n"
    "typedef struct lwpsinfo {\n"
    "	int pr_flag; int pr_lwpid; uintptr_t pr_addr; uintptr_t pr_wchan;\n"
    "	char pr_stype; char pr_state; char pr_sname; char pr_nice;\n"
    "	short pr_syscall; char pr_oldpri; char pr_cpu; int pr_pri;\n"
    "	ushort_t pr_pctcpu; ushort_t pr_pad;\n"
    "	timestruc_t pr_start; timestruc_t pr_time;\n"
    "	char pr_clname[8]; char pr_name[16];\n"
    "	processorid_t pr_onpro; processorid_t pr_bindpro; psetid_t pr_bindpset;\n"
    "	int pr_lgrp; int pr_filler[4];\n"
    "} lwpsinfo_t;\n"
    "typedef id_t taskid_t;\n"
    "typedef id_t projid_t;\n"
    "typedef id_t dprojid_t;\n"
    "typedef id_t poolid_t;\n"
    "typedef id_t zoneid_t;\n"
    "typedef struct psinfo {\n"
    "	int pr_flag; int pr_nlwp; pid_t pr_pid; pid_t pr_ppid; pid_t pr_pgid;\n"
    "	pid_t pr_sid; uid_t pr_uid; uid_t pr_euid; uid_t pr_gid; uid_t pr_egid;\n"
    "	uintptr_t pr_addr; size_t pr_size; size_t pr_rssize; size_t pr_pad1;\n"
    "	struct tty_struct *pr_ttydev;\n"
    "	ushort_t pr_pctcpu; ushort_t pr_pctmem;\n"
    "	timestruc_t pr_start; timestruc_t pr_time; timestruc_t pr_ctime;\n"
    "	char pr_fname[16]; char pr_psargs[80];\n"
    "	int pr_wstat; int pr_argc; uintptr_t pr_argv; uintptr_t pr_envp;\n"
    "	char pr_dmodel; char pr_pad2[3];\n"
    "	taskid_t pr_taskid; dprojid_t pr_projid; int pr_nzomb; poolid_t pr_poolid;\n"
    "	zoneid_t pr_zoneid; id_t pr_contract; int pr_filler[1];\n"
    "	lwpsinfo_t pr_lwp;\n"
    "} psinfo_t;\n"
    /* net.d's */
    "typedef uint32_t ipaddr_t;\n"
    "struct in_addr { ipaddr_t s_addr; };\n"
    "struct in6_addr {\n"
    "	union { uint8_t u6_addr8[16]; uint16_t u6_addr16[8]; uint32_t u6_addr32[4]; } in6_u;\n"
    "};\n"
    "typedef struct in6_addr in6_addr_t;\n";

/* net.d's constants: address families, IP protocols, link types */
#define NET                                                                                        \
	"inline int AF_UNSPEC = 0; inline int AF_UNIX = 1; inline int AF_INET = 2;\n"              \
	"inline int AF_INET6 = 10; inline int AF_PACKET = 17;\n"                                   \
	"inline int IPPROTO_IP = 0; inline int IPPROTO_ICMP = 1; inline int IPPROTO_IGMP = 2;\n"   \
	"inline int IPPROTO_IPIP = 4; inline int IPPROTO_TCP = 6; inline int IPPROTO_EGP = 8;\n"   \
	"inline int IPPROTO_PUP = 12; inline int IPPROTO_UDP = 17; inline int IPPROTO_IDP = 22;\n" \
	"inline int IPPROTO_TP = 29; inline int IPPROTO_DCCP = 33; inline int IPPROTO_IPV6 = "     \
	"41;\n"                                                                                    \
	"inline int IPPROTO_RSVP = 46; inline int IPPROTO_GRE = 47; inline int IPPROTO_ESP = "     \
	"50;\n"                                                                                    \
	"inline int IPPROTO_AH = 51; inline int IPPROTO_ICMPV6 = 58; inline int IPPROTO_MTP = "    \
	"92;\n"                                                                                    \
	"inline int IPPROTO_BEETPH = 94; inline int IPPROTO_ENCAP = 98;\n"                         \
	"inline int IPPROTO_PIM = 103; inline int IPPROTO_COMP = 108;\n"                           \
	"inline int IPPROTO_SCTP = 132; inline int IPPROTO_UDPLITE = 136;\n"                       \
	"inline int IPPROTO_MPLS = 137; inline int IPPROTO_RAW = 255;\n"                           \
	"inline int ARPHRD_NETROM = 0; inline int ARPHRD_ETHER = 1; inline int ARPHRD_EETHER = "   \
	"2;\n"                                                                                     \
	"inline int ARPHRD_AX25 = 3; inline int ARPHRD_PRONET = 4; inline int ARPHRD_CHAOS = 5;\n" \
	"inline int ARPHRD_IEEE802 = 6; inline int ARPHRD_ARCNET = 7;\n"                           \
	"inline int ARPHRD_APPLETLK = 8; inline int ARPHRD_DLCI = 15; inline int ARPHRD_ATM = "    \
	"19;\n"                                                                                    \
	"inline int ARPHRD_METRICOM = 23; inline int ARPHRD_IEEE1394 = 24;\n"                      \
	"inline int ARPHRD_EUI64 = 27; inline int ARPHRD_INFINIBAND = 32;\n"                       \
	"inline int ARPHRD_LOOPBACK = 772; inline int ARPHRD_NONE = 0xfffe;\n"

/* the registers' indexes: the words of the kernel's struct pt_regs, then DTrace's extras */
#if defined(__aarch64__)
#define REGS                                                                                       \
	"inline int R_X0 = 0; inline int R_X1 = 1; inline int R_X2 = 2; inline int R_X3 = 3;\n"    \
	"inline int R_X4 = 4; inline int R_X5 = 5; inline int R_X6 = 6; inline int R_X7 = 7;\n"    \
	"inline int R_X8 = 8; inline int R_X9 = 9; inline int R_X10 = 10; inline int R_X11 = "     \
	"11;\n"                                                                                    \
	"inline int R_X12 = 12; inline int R_X13 = 13; inline int R_X14 = 14;\n"                   \
	"inline int R_X15 = 15; inline int R_X16 = 16; inline int R_X17 = 17;\n"                   \
	"inline int R_X18 = 18; inline int R_X19 = 19; inline int R_X20 = 20;\n"                   \
	"inline int R_X21 = 21; inline int R_X22 = 22; inline int R_X23 = 23;\n"                   \
	"inline int R_X24 = 24; inline int R_X25 = 25; inline int R_X26 = 26;\n"                   \
	"inline int R_X27 = 27; inline int R_X28 = 28; inline int R_X29 = 29;\n"                   \
	"inline int R_X30 = 30; inline int R_SP = 31; inline int R_PC = 32;\n"                     \
	"inline int R_PSTATE = 33; inline int R_FP = 29; inline int R_LR = 30;\n"                  \
	"inline int R_R0 = 0; inline int R_R1 = 1;\n"
#else
#define REGS                                                                                       \
	"inline int R_R15 = 0; inline int R_R14 = 1; inline int R_R13 = 2; inline int R_R12 = "    \
	"3;\n"                                                                                     \
	"inline int R_RBP = 4; inline int R_RBX = 5; inline int R_R11 = 6; inline int R_R10 = "    \
	"7;\n"                                                                                     \
	"inline int R_R9 = 8; inline int R_R8 = 9; inline int R_RAX = 10; inline int R_RCX = "     \
	"11;\n"                                                                                    \
	"inline int R_RDX = 12; inline int R_RSI = 13; inline int R_RDI = 14;\n"                   \
	"inline int R_ERR = 15; inline int R_RIP = 16; inline int R_CS = 17;\n"                    \
	"inline int R_EFL = 18; inline int R_RSP = 19; inline int R_SS = 20;\n"                    \
	"inline int R_DS = 21; inline int R_ES = 22; inline int R_FS = 23; inline int R_GS = "     \
	"24;\n"                                                                                    \
	"inline int R_TRAPNO = 25;\n"                                                              \
	"inline int R_EBP = 4; inline int R_EBX = 5; inline int R_EAX = 10; inline int R_ECX = "   \
	"11;\n"                                                                                    \
	"inline int R_EDX = 12; inline int R_ESI = 13; inline int R_EDI = 14; inline int R_EIP = " \
	"16;\n"                                                                                    \
	"inline int R_ESP = 19; inline int R_PC = 16; inline int R_SP = 19; inline int R_FP = "    \
	"4;\n"                                                                                     \
	"inline int R_PS = 18; inline int R_R0 = 10; inline int R_R1 = 5;\n"
#endif

const char dt_dlib_inlines[] =
    "inline char PR_MODEL_ILP32 = 1;\n"
    "inline char PR_MODEL_LP64 = 2;\n"
    "inline int PIDTYPE_PID = 0; inline int PIDTYPE_TGID = 1;\n"
    "inline int PIDTYPE_PGID = 2; inline int PIDTYPE_SID = 3;\n"
    "inline int PR_STOPPED = 0x00000001; inline int PR_ISTOP = 0x00000002;\n"
    "inline int PR_DSTOP = 0x00000004; inline int PR_IDLE = 0x10000000;\n"
    "inline char SSLEEP = 1; inline char SRUN = 2; inline char SZOMB = 3;\n"
    "inline char SSTOP = 4; inline char SIDL = 5; inline char SONPROC = 6;\n"
    "inline char SWAIT = 7;\n"
    "inline int CLD_EXITED = 1; inline int CLD_KILLED = 2; inline int CLD_DUMPED = 3;\n"
    "inline int CLD_TRAPPED = 4; inline int CLD_STOPPED = 5; inline int CLD_CONTINUED = 6;\n"
    "inline psinfo_t *curpsinfo = xlate <psinfo_t *> (curthread);\n"
    "inline lwpsinfo_t *curlwpsinfo = xlate <lwpsinfo_t *> (curthread);\n" REGS NET;

/*
 * The members the builtin translators define. kind 'k': computed from the
 * task (N_KTASK); 'a': the task's address; 'z': a constant (value).
 */
static const struct dt_dlib_member psinfo_members[] = {
    {"pr_nlwp", 'z', 1},   {"pr_pid", 'k', 0},	  {"pr_ppid", 'k', 0},	 {"pr_pgid", 'k', 0},
    {"pr_sid", 'k', 0},	   {"pr_uid", 'k', 0},	  {"pr_euid", 'k', 0},	 {"pr_gid", 'k', 0},
    {"pr_egid", 'k', 0},   {"pr_addr", 'a', 0},	  {"pr_ttydev", 'k', 0}, {"pr_fname", 'k', 0},
    {"pr_psargs", 'k', 0}, {"pr_wstat", 'z', 0},  {"pr_argc", 'k', 0},	 {"pr_argv", 'k', 0},
    {"pr_envp", 'k', 0},   {"pr_dmodel", 'z', 2}, {"pr_taskid", 'z', 0}, {"pr_projid", 'z', 0},
    {"pr_nzomb", 'z', 0},  {"pr_poolid", 'z', 0}, {"pr_zoneid", 'z', 0}, {"pr_contract", 'z', 0},
    {NULL, 0, 0}};

static const struct dt_dlib_member lwpsinfo_members[] = {
    {"pr_flag", 'k', 0},  {"pr_lwpid", 'k', 0}, {"pr_addr", 'a', 0},  {"pr_wchan", 'z', 0},
    {"pr_stype", 'z', 0}, {"pr_state", 'k', 0}, {"pr_sname", 'k', 0}, {"pr_pri", 'k', 0},
    {"pr_name", 'k', 0},  {"pr_onpro", 'k', 0}, {NULL, 0, 0}};

const struct dt_dlib_xlator dt_dlib_xlators[] = {
    {"struct psinfo", DT_XL_PSINFO, psinfo_members},
    {"struct lwpsinfo", DT_XL_LWPSINFO, lwpsinfo_members},
    {NULL, 0, NULL}};

const struct dt_dlib_member *dt_dlib_member(int builtin, const char *name)
{
	const struct dt_dlib_xlator *x;
	const struct dt_dlib_member *m;

	for (x = dt_dlib_xlators; x->out; x++)
		if (x->builtin == builtin)
			for (m = x->members; m->name; m++)
				if (!strcmp(m->name, name))
					return m;
	return NULL;
}
