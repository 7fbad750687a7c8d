#include <stdlib.h>

#include "dtrace-wrapper.h"

unsigned erl_spawn(const char *mfa);
void erl_send(unsigned from, unsigned to, unsigned size);
void erl_exit(unsigned pid, const char *reason);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	unsigned first = erl_spawn("init:boot/1"), prev = first;

	for (int i = 0; i < n; i++) {
		unsigned p = erl_spawn("worker:loop/2");

		erl_send(prev, p, 10u * (unsigned)(i + 1));
		prev = p;
	}
	erl_exit(prev, "normal");
	return 0;
}
