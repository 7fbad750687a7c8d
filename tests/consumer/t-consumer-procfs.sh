#!/bin/bash
# DTrace's process and thread views (issue 35): curpsinfo and curlwpsinfo
# (psinfo_t, lwpsinfo_t: dtrace/consumer/dlib.c, their members read from
# the task by dtrace/engine/codegen_procfs.c), xlate <psinfo_t> of a task,
# uregs[R_*], chip/lgrp/pset and curcpu's cpuinfo_t, and DTrace's
# refusals of them with their tags. In BEGIN the process is dtrace itself,
# so every expected value comes from outside the engine: the D macros of
# the dtrace process ($pid, $ppid, $pgid, $sid, $uid, $gid: getpid() and
# the like, dtrace/consumer/macros.c), its command line, /proc, sysfs.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine

cat >"$T/p.d" <<'D'
#pragma D option quiet
BEGIN
{
	printf("%d %d %d %d %d %d %d\n", curpsinfo->pr_pid - $pid, curpsinfo->pr_ppid - $ppid,
	    curpsinfo->pr_pgid - $pgid, curpsinfo->pr_sid - $sid, curpsinfo->pr_uid - $uid,
	    curpsinfo->pr_gid - $gid, curpsinfo->pr_euid - $euid);
	printf("%s|%s|%s|%d|%d\n", curpsinfo->pr_fname, curlwpsinfo->pr_name,
	    curpsinfo->pr_psargs, curpsinfo->pr_argc, curpsinfo->pr_dmodel == PR_MODEL_LP64);
	printf("%s|%s|%d\n", copyinstr(*(uint64_t *)(curpsinfo->pr_argv + 8 * 3)),
	    copyinstr(*(uint64_t *)curpsinfo->pr_envp),
	    *(uint64_t *)copyin(curpsinfo->pr_argv, 8) == *(uint64_t *)curpsinfo->pr_argv);
	printf("%d %d %c %d %d %d\n", curlwpsinfo->pr_lwpid - tid, curlwpsinfo->pr_state,
	    curlwpsinfo->pr_sname, curlwpsinfo->pr_flag, curlwpsinfo->pr_addr == (uintptr_t)curthread,
	    curpsinfo->pr_addr == (uintptr_t)curthread);
	printf("%d %d %d %c\n", xlate <psinfo_t> (curthread).pr_pid - pid,
	    xlate <lwpsinfo_t *> (curthread)->pr_lwpid - tid, curlwpsinfo->pr_onpro - cpu,
	    curlwpsinfo->pr_name[1]);
	exit(0);
}
D
# argv[0] is dtrace's path as run; its argv[3] this script's; the first
# variable of its environment is set here for it to see; argv[0]'s address
# read through copyin()'s bytes (a cast of copyin()) and directly.
env -i PROCFS_FIRST=yes taskset -c 0 "$DTRACE" -q -s "$T/p.d" >"$T/out" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "dtrace -s p.d failed"; }
same "$T/out" "0 0 0 0 0 0 0\ndtrace|dtrace|$DTRACE|4|1\n$T/p.d|PROCFS_FIRST=yes|1\n0 2 R 0 1 1\n0 0 0 t\n\n" \
	"curpsinfo and curlwpsinfo of dtrace itself"

# A task read through a pointer: a null one reads 0 (no fault), as DTrace's.
cat >"$T/n.d" <<'D'
#pragma D option quiet
struct task_struct *T;
BEGIN
{
	T = 0;
	printf("%d %d\n", xlate <psinfo_t> (T).pr_addr, xlate <psinfo_t> (T).pr_pid);
	exit(0);
}
D
dt 0 -s "$T/n.d"
same "$T/out" "0 0\n\n" "xlate of a null task"

# The registers of dtrace's user mode at BEGIN (a uprobe on dtrace itself):
# x86-64's user code and stack segments are 0x33 and 0x2b (the kernel's
# would be 0x10 and 0x18), and R_PC/R_SP are the same words as R_RIP/R_RSP.
if [ "$(uname -m)" = x86_64 ]; then
	cat >"$T/r.d" <<'D'
#pragma D option quiet
BEGIN
{
	printf("%x %x %d %d %d %d\n", uregs[R_CS], uregs[R_SS], uregs[R_PC] == uregs[R_RIP],
	    uregs[R_SP] == uregs[R_RSP], uregs[R_PC] != 0, uregs[R_FS] != 0);
	exit(0);
}
D
	dt 0 -s "$T/r.d"
	same "$T/out" "33 2b 1 1 1 1\n\n" "uregs[] at BEGIN"
fi

# The CPU dtrace runs on (pinned to CPU 0 by dt): its package and node as sysfs says.
chip=$(cat /sys/devices/system/cpu/cpu0/topology/physical_package_id 2>/dev/null || echo 0)
node=0
for d in /sys/devices/system/cpu/cpu0/node*; do
	[ -e "$d" ] && node=${d##*/node}
done
cat >"$T/c.d" <<'D'
#pragma D option quiet
cpuinfo_t *ci;
BEGIN
{
	ci = curcpu;
	printf("%d %d %d %d %d %d %d %d\n", cpu, curcpu->cpu_id, ci->cpu_id, chip, ci->cpu_chip,
	    lgrp, ci->cpu_lgrp, pset);
	exit(0);
}
D
dt 0 -s "$T/c.d"
same "$T/out" "0 0 0 $chip $chip $node $node 0\n\n" "chip, lgrp, pset and curcpu on CPU 0"

# DTrace's refusals.
refused_tag D_XLATE_NOCONV "translator does not define conversion for member: pr_cpu" \
	'BEGIN { trace(curlwpsinfo->pr_cpu); }'
refused_tag D_XLATE_NOCONV "translator does not define conversion for member: pr_size" \
	'BEGIN { trace(curpsinfo->pr_size); }'
refused_tag D_ARR_BOUNDS "index outside array bounds: 16, max is 16" \
	'BEGIN { trace(curlwpsinfo->pr_name[16]); }'
refused_tag D_PROTO_ARG "uregs[ ] argument #1 is incompatible with prototype:" \
	'BEGIN { i = 1; trace(uregs[i]); }'
refused_tag D_UNKNOWN "uregs[]: index out of bounds (99)" 'BEGIN { trace(uregs[99]); }'
refused_tag D_XLATE_REDECL \
	"translator from struct task_struct * to struct psinfo has already been declared" \
	'translator psinfo_t < struct task_struct *T > { pr_pid = 1; }; BEGIN { exit(0); }'
exit 0
