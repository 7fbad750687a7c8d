// C++: probes in a member function, in a member function inlined into
// another (its mangled name is the inlined function's), and in two
// instantiations of a template (two functions, one probe name). Probes from
// <sys/sdt.h> directly; the program also maps libstdc++, whose own stapsdt
// probes (Debian builds it with them) are listed too. argv[1]: the ready
// file, as in app.c.
#include <fcntl.h>
#include <sys/sdt.h>
#include <unistd.h>

namespace ns {
struct Worker {
	int v;
	inline void step(int x)
	{
		STAP_PROBE2(ltcxx, step, x, v);
	}
	__attribute__((noinline)) void run(int n)
	{
		STAP_PROBE1(ltcxx, run, n);
		step(n);
		step(n + 1);
	}
};

template <typename T> __attribute__((noinline)) T twice(T t)
{
	STAP_PROBE1(ltcxx, tmpl, t);
	return t * 2;
}
} // namespace ns

int main(int argc, char **argv)
{
	ns::Worker w{argc};
	w.run(argc);
	volatile long s = ns::twice(argc) + ns::twice(2L);
	(void)s;
	if (argc < 2)
		return 2;
	close(open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	for (;;)
		pause();
}
