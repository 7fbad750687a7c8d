/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -C` (and a file that needs cpp without -C: usdt_read_source(),
 * below): the C preprocessor runs as a child whose standard output is a
 * pipe we read to the end, so no temporary file is ever created (SystemTap's
 * tool writes `.dtrace-temp.*` files into the current directory and makes
 * concurrent runs collide). The .d is passed by its own path, so the line
 * markers cpp writes (`# 12 "inc/x.h"`) name the original files and the
 * parser's diagnostics point into them.
 *
 * The command is $CPP split at white space (so "gcc -E" works), or "cc -E".
 * `-x c` makes compiler drivers treat a .d file as C instead of as a linker
 * input. `linux` and `unix` are predefined to 1 by GNU cpp in its default
 * mode; a provider or probe of that name would silently become `1`, so they
 * are undefined first (a -D given by the user still wins: it comes later).
 *
 * A D program to trace gets DTrace's environment too (opts->dstdc): its
 * predefined names, __GNUC__ undefined, and ISO C (-std=c99) by default, so
 * a system header included under -C declares what a C99 program sees (no
 * GNU inline functions, which D could not take: <endian.h>'s byte swaps).
 * The user's -D/-U/-I (and -x define/undef/incdir) come after, and win.
 */
#include "cpp.h"
#include "usdt_provider.h"
#include "words.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int read_all(int fd, char **text, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

int usdt_cpp_run(const struct usdt_cpp_opts *opts, const char *file, char **text, size_t *len,
		 struct usdt_diag *diag)
{
	const char *cmd = opts->cpp && *opts->cpp ? opts->cpp : "cc -E";
	posix_spawn_file_actions_t fa;
	char *words = NULL, *dotfile = NULL;
	char **argv;
	int pipefd[2], status, err, rc = -1;
	size_t n, i;
	pid_t pid;

	argv = usdt_split_words(cmd, opts->nargs + 16, &words);
	if (!argv) {
		usdt_error(diag, "out of memory");
		return -1;
	}
	if (!argv[0]) {
		usdt_error(diag, "the preprocessor command ($CPP) is empty");
		goto out_argv;
	}
	for (n = 0; argv[n]; n++)
		;
	argv[n++] = "-Ulinux";
	argv[n++] = "-Uunix";
	if (opts->dstdc) {
		static const char *const defs[] = {"-D__linux",	   "-D__unix",	    "-D__SVR4",
						   "-D__SUNW_D=1", "-D__SUNW_D_64", "-D__Linux",
						   "-U__GNUC__"};

		for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
			argv[n++] = (char *)defs[i];
		if (opts->dstdc == 'a')
			argv[n++] = "-std=c99";
		else if (opts->dstdc == 's')
			argv[n++] = "-traditional-cpp";
	}
	for (i = 0; i < opts->nargs; i++)
		argv[n++] = opts->args[i];
	argv[n++] = "-xc";
	/* A file named like an option would be taken for one. */
	if (file[0] == '-') {
		size_t fl = strlen(file) + 3;

		dotfile = malloc(fl);
		if (!dotfile) {
			usdt_error(diag, "out of memory");
			goto out_argv;
		}
		snprintf(dotfile, fl, "./%s", file);
		argv[n++] = dotfile;
	} else {
		argv[n++] = (char *)file;
	}
	argv[n] = NULL;

	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		usdt_error(diag, "cannot create a pipe for the preprocessor: %s", strerror(errno));
		goto out_argv;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (err) {
		close(pipefd[0]);
		usdt_error(diag, "cannot run the preprocessor '%s' for '%s': %s (set $CPP to one)",
			   argv[0], file, strerror(err));
		goto out_argv;
	}

	err = read_all(pipefd[0], text, len);
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
	}
	if (err) {
		usdt_error(diag, "cannot read the preprocessor's output: %s", strerror(-err));
		goto out_argv;
	}
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (status != -1 && WIFSIGNALED(status))
			usdt_error(diag, "preprocessor '%s' on '%s' was killed by signal %d", cmd,
				   file, WTERMSIG(status));
		else
			usdt_error(diag, "preprocessor '%s' failed on '%s' (exit status %d)", cmd,
				   file, status == -1 ? -1 : WEXITSTATUS(status));
		free(*text);
		*text = NULL;
		goto out_argv;
	}
	rc = 0;
out_argv:
	free(dotfile);
	free(argv);
	free(words);
	return rc;
}

static int read_whole_file(const char *path, char **text, size_t *len, struct usdt_diag *diag)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		usdt_error(diag, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		usdt_error(diag, "cannot read '%s': %s", path, strerror(EISDIR));
		close(fd);
		return -1;
	}
	err = read_all(fd, text, len);
	close(fd);
	if (err == -ENOMEM)
		usdt_error(diag, "out of memory");
	else if (err)
		usdt_error(diag, "cannot read '%s': %s", path, strerror(-err));
	return err ? -1 : 0;
}

/*
 * One -s source, read whole: through cpp with -C, and also without -C when
 * the file needs cpp to mean what it says (usdt_needs_cpp(): a conditional,
 * an #include, a macro it uses). Such a file was written for `dtrace -C`;
 * refusing it breaks builds SystemTap's tool serves (it skips every `#`
 * line, and so also declares the probes under `#if 0`). The warning is one
 * line, once per run, at the first such directive; -D/-I/-U apply as with -C.
 * Not for a D program to trace (auto_cpp false): there, as in DTrace, a '#'
 * line other than #pragma without -C is an error of the D compiler
 * (D_PRAGCTL_INVAL, consumer/lex.c).
 */
int usdt_read_source(const struct usdt_cpp_opts *co, bool with_cpp, bool auto_cpp, const char *src,
		     char **text, size_t *len, bool *cpp_warned, struct usdt_diag *diag)
{
	struct usdt_cpp_need need;
	struct stat st;

	if (with_cpp)
		return usdt_cpp_run(co, src, text, len, diag);
	if (read_whole_file(src, text, len, diag))
		return -1;
	if (!auto_cpp || !usdt_needs_cpp(*text, *len, &need))
		return 0;
	free(*text);
	*text = NULL;
	if (stat(src, &st) != 0 || !S_ISREG(st.st_mode)) {
		/* cpp would read a pipe (/dev/stdin) again, and find it empty. */
		usdt_error_at(diag, src, need.line, need.col, NULL,
			      "'#%s' needs the C preprocessor, and '%s' is not a regular file "
			      "that it could read again: pass -C",
			      need.directive, src);
		return -1;
	}
	if (!*cpp_warned)
		usdt_warning_at(diag, src, need.line, need.col, NULL,
				"'#%s' needs the C preprocessor: running it as if -C were given "
				"(pass -C to silence this)",
				need.directive);
	*cpp_warned = true;
	return usdt_cpp_run(co, src, text, len, diag);
}
