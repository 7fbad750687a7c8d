#!/bin/bash
# The path-swap attack of issue 21, run as nobody against a private daemon:
# can a caller make the root daemon create uprobe events on a root-owned file
# it never mapped, by changing the name of its own file between the daemon's
# check and the kernel's resolution of the definitions?
#
#   t-sec-path-swap.sh MODES SECONDS ROUNDS
#
# For each mode of MODES (pathswap.c: symlink, rename, dir), nobody runs
# pathswap for at most SECONDS and ROUNDS rounds: a fresh copy of a
# 256-site program in its own directory (nobody's, inside a 1777 scratch
# directory), REGISTERed, then its name swapped for a symlink to the victim
# (or a directory component for a symlink to the victim's directory) at a
# random moment of the registration. The victim is a root-owned copy of the
# same program in a root-owned directory. After each round's answer, while
# the events exist, planted.c asks the kernel how many of the group's
# sites are bound to the victim's inode.
#
# Passes when no site was ever planted on the victim and the attack really
# ran: at least ATTACKS rounds (half of ROUNDS when ROUNDS is given, else
# 50) registered (status 0, 256 probes) with their swap made before the
# answer. Whether a round's random delay lands before the answer depends on
# the machine's load, so the count, not a ratio, is the precondition: past
# SECONDS (or ROUNDS) a mode goes on until it has ATTACKS such rounds, for
# at most ten times as long, and only then fails as "did not run". USDTKIT_SEC_EXPECT_PLANTED=1 inverts the verdict
# (passes only when something was planted): how the attack was shown to
# work on the daemon before the fix (HELPERD=old build). The looped run
# (suite security, t-sec-path-swap-loop) takes USDTKIT_SEC_LOOP_S seconds
# (meson passes 10; run it for a minute by hand, see tests/security/README).
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
need_tracefs
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"

MODES=${1:-symlink rename dir}
SECS=${2:-${USDTKIT_SEC_LOOP_S:-10}}
ROUNDS=${3:-}
ATTACKS=50
[ -z "$ROUNDS" ] || ATTACKS=$(((ROUNDS + 1) / 2))
MAXROUNDS=1000000
[ -z "$ROUNDS" ] || MAXROUNDS=$((ROUNDS * 10))
PATHSWAP="$USDTKIT_BUILDDIR/tests/security/pathswap"
PLANTED="$USDTKIT_BUILDDIR/tests/security/planted"
[ -x "$PATHSWAP" ] && [ -x "$PLANTED" ] || fail "no $PATHSWAP or $PLANTED: build first"
id nobody >/dev/null 2>&1 || fail "no user nobody"

# nobody reaches the socket and its scratch directory through $T, reads nothing else there.
chmod 711 "$T"
mkdir -m 1777 "$T/scratch"
mkdir -m 755 "$T/victim"
cc=gcc
[ -n "${USDTKIT_SANITIZE:-}" ] && cc=clang
$cc -O2 -I"$SDT_INC" -DPROV="${P}atk" -o "$T/victim/gen" "$USDTKIT_SRCDIR/tests/security/progs/many.c" ||
	fail "building the 256-site program"
chmod 755 "$T/victim/gen"
[ "$(stat -c %u "$T/victim/gen")" = 0 ] || fail "the victim is not root's"
cp "$T/victim/gen" "$T/scratch/src"
chmod 644 "$T/scratch/src"
nsites=$(readelf -n "$T/victim/gen" | grep -c "Name: hit")
expect_eq "$nsites" 256 "sites in the attack's program"

start_daemon

total_planted=0
for mode in $MODES; do
	W="$T/scratch/atk-$mode"
	mkdir -m 700 "$W"
	chown 65534:65534 "$W"
	rounds=0 attempts=0 planted=0 statuses=""
	t0=$SECONDS
	coproc ATK {
		exec setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$PATHSWAP" "$mode" "$W" "$T/scratch/src" "$T/victim/gen" "$((SECS * 10))" "$MAXROUNDS" \
			2>"$T/atk-$mode.err"
	}
	atk_pid=$ATK_PID
	at_exit "kill -9 $atk_pid 2>/dev/null"
	while read -r -u "${ATK[0]}" line; do
		case $line in
		round*)
			rounds=$((rounds + 1))
			echo "$line" >>"$T/rounds-$mode"
			# round N delay US status=S nprobes=P swapped=0|1
			set -- $line
			[ "$5" = status=0 ] && [ "$6" = nprobes=256 ] && [ "$7" = swapped=1 ] &&
				attempts=$((attempts + 1))
			[ "$5" = status=0 ] || statuses="$statuses ${5#status=}"
			out=$("$PLANTED" "$T/victim/gen" "sdt_${P}atk") || fail "planted: $out"
			n=${out#planted }
			n=${n%% *}
			if [ "$n" -gt 0 ]; then
				echo "$mode round $rounds (delay ${4} us): $out on the root-owned victim"
				planted=$((planted + n))
			fi
			# Enough: SECONDS (or ROUNDS) done and ATTACKS real attacks seen.
			if [ "$attempts" -ge "$ATTACKS" ] &&
				{ [ $((SECONDS - t0)) -ge "$SECS" ] || { [ -n "$ROUNDS" ] && [ "$rounds" -ge "$ROUNDS" ]; }; }; then
				echo stop >&"${ATK[1]}"
			else
				echo next >&"${ATK[1]}"
			fi
			;;
		done*) break ;;
		*) fail "pathswap said: $line" ;;
		esac
	done
	wait "$atk_pid" || { cat "$T/atk-$mode.err" >&2; fail "$mode: pathswap failed"; }
	echo "$mode: $rounds rounds, $attempts registered with the swap made before the answer," \
		"$planted sites planted on the victim${statuses:+; other answers:$statuses}"
	total_planted=$((total_planted + planted))
	[ "$rounds" -gt 0 ] || fail "$mode: no round ran"
	[ "$attempts" -ge "$ATTACKS" ] || tail -50 "$T/rounds-$mode" >&2
	[ "$attempts" -ge "$ATTACKS" ] ||
		fail "$mode: only $attempts of $rounds rounds (in $((SECONDS - t0)) s) were a registration with a swap, $ATTACKS needed: the attack did not run"
	daemon_healthy
done

if [ "${USDTKIT_SEC_EXPECT_PLANTED:-}" = 1 ]; then
	[ "$total_planted" -gt 0 ] || fail "nothing was planted (expected on a daemon without the fix)"
	echo "the attack planted $total_planted sites on the victim (as expected of this daemon)"
else
	[ "$total_planted" -eq 0 ] || fail "$total_planted sites were planted on a root-owned file nobody never mapped"
fi
# The events of nobody's files named only names nobody can change (an alias, a descriptor).
[ "${USDTKIT_SEC_EXPECT_PLANTED:-}" = 1 ] ||
	expect_no_grep "registered $T/scratch/.* \([0-9]+:[0-9]+\): [0-9]+ probe sites, [0-9]+ events created$" \
		"$DLOG.new" "a file of nobody's registered under its literal path"
HD_OK=1
