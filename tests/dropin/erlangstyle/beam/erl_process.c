#include "dtrace-wrapper.h"

unsigned erl_spawn(const char *mfa);
void erl_exit(unsigned pid, const char *reason);

static unsigned next_pid = 80;

unsigned erl_spawn(const char *mfa)
{
	unsigned pid = next_pid++;

	if (DTRACE_ENABLED(process_spawn)) {
		DTRACE_CHARBUF(process_name, 32);
		DTRACE_CHARBUF(mfa_buf, 64);

		dtrace_pid_str(pid, process_name);
		snprintf(mfa_buf, 64, "%s", mfa);
		DTRACE2(process_spawn, process_name, mfa_buf);
	}
	if (DTRACE_ENABLED(gc_major_start)) {
		DTRACE_CHARBUF(process_name, 32);

		dtrace_pid_str(pid, process_name);
		DTRACE3(gc_major_start, process_name, (int)pid * 2, 233UL * pid);
	}
	return pid;
}

void erl_exit(unsigned pid, const char *reason)
{
	DTRACE_CHARBUF(process_name, 32);
	char why[32];

	dtrace_pid_str(pid, process_name);
	snprintf(why, sizeof(why), "%s", reason);
	DTRACE2(process_exit, process_name, why);
}
