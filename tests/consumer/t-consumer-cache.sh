#!/bin/bash
# dtrace -x engine=bpf's cache of compiled objects (dtrace/engine/cache.c):
# a program's second start skips clang (a clang wrapper counts its
# compiles), another program or another clang is compiled again; the cache
# directory is made 0700 and its entries 0600; a directory that is a
# symbolic link, that its group or others may write, or that another user
# owns is not used (one warning, clang runs every time), as root and as
# nobody (setpriv); an entry others may write is not used, and is replaced;
# past 256 entries the least recently used are removed.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_tracefs
command -v setpriv >/dev/null || fail "setpriv is not installed (util-linux)"
REAL_CLANG=$(command -v clang || command -v clang-14) ||
	fail "clang is not installed (scripts/deps.sh installs it)"

# $W: what nobody must reach too (the wrapper, its count), beside $T.
W=$(mktemp -d /tmp/usdtkit-cache-XXXXXX)
chmod 0755 "$W"
at_exit "rm -rf '$W'"
# clang_wrapper FILE VERSION: a clang that counts its compiles in $W/count
# and answers --version with VERSION (another clang, as far as a key goes).
clang_wrapper() {
	cat >"$1" <<EOF
#!/bin/sh
for a; do [ "\$a" = --version ] && { echo "$2"; exit 0; }; done
for a; do [ "\$a" = -c ] && echo compile >>"$W/count"; done
exec "$REAL_CLANG" "\$@"
EOF
	chmod 0755 "$1"
}
clang_wrapper "$W/clang" "counting clang 1 (wraps $REAL_CLANG)"
: >"$W/count"
chmod 0666 "$W/count"
export USDTKIT_CLANG=$W/clang
compiles() { wc -l <"$W/count"; }

PROG='BEGIN { printf("%s\n", strjoin("cach", "ed")); exit(0); }'
run_cached() { # DIR EXPECTED-COMPILES WHAT [dtrace args]
	local dir=$1 want=$2 what=$3
	shift 3
	USDTKIT_CACHE_DIR=$dir dt 0 -x engine=bpf -q "$@"
	same "$T/out" "cached\n\n" "$what: the output"
	[ "$(compiles)" = "$want" ] || { cat "$T/err" >&2; fail "$what: clang compiled $(compiles) times, expected $want"; }
}

# The first start compiles and keeps the object; the second skips clang.
run_cached "$T/cache" 1 "a first start" -n "$PROG"
[ "$(stat -c %a "$T/cache")" = 700 ] || fail "the cache directory is mode $(stat -c %a "$T/cache"), not 700"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "a first start with a cache printed messages"; }
ls "$T/cache"/*.bpfo >/dev/null 2>&1 || fail "no entry in the cache after a first start"
for f in "$T/cache"/*; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f is mode $(stat -c %a "$f"), not 600"
done
run_cached "$T/cache" 1 "a second start" -n "$PROG"
USDTKIT_CACHE_DIR=$T/cache USDTKIT_ENGINE_TIMES=1 dt 0 -x engine=bpf -q -n "$PROG"
grep -q "^dtrace: cached object" "$T/err" || { cat "$T/err" >&2; fail "USDTKIT_ENGINE_TIMES: no cached object"; }
[ "$(compiles)" = 1 ] || fail "a third start ran clang"

# Another program (the key is the source), then -e of it: cached for its start.
PROG2='BEGIN { printf("%s\n", strjoin("cac", "hed")); exit(0); }'
run_cached "$T/cache" 2 "another program" -n "$PROG2"
run_cached "$T/cache" 2 "the other program again" -n "$PROG2"
USDTKIT_CACHE_DIR=$T/cache dt 0 -x engine=bpf -q -e -n "$PROG2"
[ "$(compiles)" = 2 ] || fail "-e of a cached program ran clang"

# Another clang (another --version: the memo is by the clang file's identity).
clang_wrapper "$W/clang2" "counting clang 2 (wraps $REAL_CLANG)"
USDTKIT_CLANG=$W/clang2 run_cached "$T/cache" 3 "another clang" -n "$PROG"
USDTKIT_CLANG=$W/clang2 run_cached "$T/cache" 3 "another clang, again" -n "$PROG"
run_cached "$T/cache" 3 "the first clang again" -n "$PROG"

# An entry that others may write is not used (and is replaced by a good one).
for f in "$T/cache"/*.bpfo; do chmod 0666 "$f"; done
run_cached "$T/cache" 4 "an entry others may write" -n "$PROG"
run_cached "$T/cache" 4 "the entry replaced" -n "$PROG"

# Past 256 entries the least recently used go: 300 old ones, one new start.
mkdir -m 0700 "$T/full"
for i in $(seq 1000 1299); do
	: >"$T/full/000000000000$i.bpfo"
	chmod 0600 "$T/full/000000000000$i.bpfo"
done
touch -d '2020-01-01' "$T/full"/*.bpfo
touch -d '2021-01-01' "$T/full/0000000000001299.bpfo"
before=$(compiles)
run_cached "$T/full" $((before + 1)) "a full cache" -n "$PROG"
[ "$(find "$T/full" -name '*.bpfo' | wc -l)" = 256 ] ||
	fail "a full cache holds $(find "$T/full" -name '*.bpfo' | wc -l) entries, not 256"
[ -e "$T/full/0000000000001299.bpfo" ] || fail "a full cache lost its most recently used old entry"
run_cached "$T/full" $((before + 1)) "a full cache, the new entry kept" -n "$PROG"

# refused DIR WHY: the directory is not used (one warning naming why); clang
# runs every time; nothing is written into it.
refused() {
	local dir=$1 why=$2 before
	before=$(compiles)
	run_cached "$dir" $((before + 1)) "$why" -n "$PROG"
	grep -qF "dtrace: warning: compiled programs are not cached: $dir: $why" "$T/err" ||
		{ cat "$T/err" >&2; fail "the cache in $dir: no warning '$why'"; }
	[ "$(grep -c warning "$T/err")" = 1 ] || { cat "$T/err" >&2; fail "$why: more than one warning"; }
	run_cached "$dir" $((before + 2)) "$why, again" -n "$PROG"
	if ls "$dir"/*.bpfo >/dev/null 2>&1; then fail "$why: an entry was written in $dir"; fi
}
mkdir -m 0777 "$T/open"
refused "$T/open" "its group or other users may write it (mode 777, owner 0)"
mkdir -m 0770 "$T/group"
refused "$T/group" "its group or other users may write it (mode 770, owner 0)"
mkdir -m 0700 "$T/nobodys"
chown nobody "$T/nobodys"
refused "$T/nobodys" "another user owns it (mode 700, owner $(id -u nobody))"
mkdir -m 0700 "$T/empty"
ln -s "$T/empty" "$T/link"
refused "$T/link" "it is a symbolic link"

# As nobody: root's cache is not nobody's (the load then needs root: -e says so).
mkdir -m 0755 "$W/roots"
USDTKIT_CACHE_DIR=$W/roots USDTKIT_CLANG=$W/clang "$DTRACE" -x engine=bpf -n "$PROG" >/dev/null 2>&1 ||
	fail "root's start with $W/roots"
ls "$W/roots"/*.bpfo >/dev/null 2>&1 || fail "root's cache in $W/roots has no entry"
before=$(compiles)
rc=0
(cd / && setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	env HOME=/nonexistent USDTKIT_CACHE_DIR="$W/roots" USDTKIT_CLANG="$W/clang" TMPDIR=/tmp \
	"$DTRACE" -x engine=bpf -e -n "$PROG") >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "-e as nobody exited $rc, expected 1"; }
grep -qF "dtrace: warning: compiled programs are not cached: $W/roots: another user owns it (mode 755, owner 0)" "$T/err" ||
	{ cat "$T/err" >&2; fail "nobody used root's cache without a warning"; }
grep -qF "dtrace: error: loading BPF programs needs root: run dtrace as root, e.g. with sudo" "$T/err" ||
	{ cat "$T/err" >&2; fail "-e as nobody: no error saying root is needed"; }
[ "$(compiles)" = $((before + 1)) ] || fail "nobody's -e did not compile (root's object used?)"
echo "PASS"
