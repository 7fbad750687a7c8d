#!/bin/bash
# The constructor's side of the socket: a daemon (tests/drti/fakehelperd)
# whose answers are wrong in the ways t-drti-robust does not try: truncated
# at every interesting length, 64 KiB, of another version, of an unknown
# type, the request echoed back, a size field that lies, replies to other
# seqs before the right one (a few, and more than drti skips), a LIST_ENTRY
# instead of a REPLY, a storm of random packets, a connection closed or shut
# down after the request was read, a daemon that dies mid-request.
#
# For each, a -G program (gcc and clang) that registers itself, dlopens a -G
# library, dlcloses it and forks (four waited requests) behaves exactly as
# with registration disabled: exit status, stdout (errno at main and after
# fork, descriptors, probes, fork child's status), an empty stderr, no
# SIGPIPE (it would show as exit status 141); and the run takes no longer
# than the timeout per waited request (plus slack for a loaded machine).
# A USDTKIT_DEBUG run shows the fault was met and how drti took it: a valid
# REPLY after the strays counts, nothing else does.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"

TMO=300
REQS=4 # program, library, dlclose, fork child
modes="trunc:0 trunc:1 trunc:12 trunc:16 trunc:23 huge hugesize badversion badtype echo badsize
otherseq:3 otherseq:20 entry storm closemid shutmid exitmid"
# What drti's debug line says of the program's REGISTER (a check that the
# case was exercised, not of the behaviour, which must not change).
debug_outcome() { # mode
	case $1 in
	otherseq:3) echo 'done, 3 probes' ;;
	otherseq:20) echo 'no answer among the helper.s packets' ;;
	trunc:0 | closemid | shutmid | exitmid) echo 'closed the connection|recv: ECONNRESET|connect: ECONNREFUSED|no answer before the timeout' ;;
	entry | badtype | echo) echo 'no answer before the timeout' ;; # well-formed, not ours: skipped
	storm) echo 'malformed answer|no answer among the helper.s packets|no answer before the timeout' ;;
	*) echo 'malformed answer' ;;
	esac
}

for cc in $COMPILERS; do
	build_progs "$cc"
	cmds=(errno fds probe dlopen "$LIB" fds dlclose fork errno fds probe \; fds)
	run_prog "$T/base.out" "$T/base.err" USDTKIT_DISABLE=1 -- "${cmds[@]}" && brc=0 || brc=$?
	[ ! -s "$T/base.err" ] || fail "$cc: a disabled run wrote to stderr"
	for mode in $modes; do
		start_fake "$mode"
		# A run over the wall-clock bound is run again, three in all: a
		# loaded machine can slow one run, a drti that waits too long
		# waits too long every time (tests/README.md, load).
		for try in 1 2 3; do
			t0=$(date +%s%N)
			run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=$TMO \
				-- "${cmds[@]}" && rc=0 || rc=$?
			ms=$((($(date +%s%N) - t0) / 1000000))
			expect_eq "$rc" "$brc" "$cc $mode: exit status (141 would be SIGPIPE)"
			cmp -s "$T/base.out" "$T/out" || { diff "$T/base.out" "$T/out" >&2; fail "$cc $mode: stdout differs"; }
			[ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "$cc $mode: stderr not empty"; }
			[ "$ms" -le $((REQS * TMO + $(bound_ms 1500))) ] && break
			echo "$cc $mode: run $try took $ms ms" >&2
			[ "$try" -lt 3 ] || fail "$cc $mode: the run took $ms ms ($REQS waits of $TMO ms at most), three times"
		done
		[ "$(nmsgs)" -ge 1 ] || fail "$cc $mode: the server received nothing (not exercised)"
		stop_fake

		# The same fault, one request, seen through drti's debug line.
		start_fake "$mode"
		run_prog "$T/dout" "$T/derr" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=$TMO \
			USDTKIT_DEBUG=1 -- say x || fail "$cc $mode: the debug run failed"
		expect_grep "^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: .*($(debug_outcome "$mode"))" \
			"$T/derr" "$cc $mode: drti's account of the fault"
		[ "$mode" != storm ] || expect_grep '^storm sent=[1-9]' "$FLOG" "$cc storm: packets sent"
		stop_fake
		echo "ok: $cc $mode: unchanged behaviour, $ms ms; drti: $(head -1 "$T/derr" | sed 's/.*: //')"
	done
done
