#include "dtrace-wrapper.h"

void erl_send(unsigned from, unsigned to, unsigned size);

void erl_send(unsigned from, unsigned to, unsigned size)
{
	if (DTRACE_ENABLED(message_send)) {
		DTRACE_CHARBUF(sender_name, 32);
		DTRACE_CHARBUF(receiver_name, 32);

		dtrace_pid_str(from, sender_name);
		dtrace_pid_str(to, receiver_name);
		DTRACE4(message_send, sender_name, receiver_name, size, -1);
	}
}
