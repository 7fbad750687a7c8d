# The committed tree, for the checks that build from it (sourced by
# scripts/fresh-check.sh and packaging/debian/build.sh).
#
#   head_commit WHO TOP    prints TOP's HEAD commit; exits, saying why, when
#                          TOP is not a checkout with a commit; notes on
#                          stderr that uncommitted changes are not part of it
head_commit() {
	_c=$(git -C "$2" rev-parse --verify -q HEAD) || {
		echo "$1: $2 is not a git checkout with a commit; it uses the committed tree (git archive HEAD)" >&2
		exit 1
	}
	if [ -n "$(git -C "$2" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		echo "$1: note: using HEAD ($_c); uncommitted changes are not part of it" >&2
	fi
	echo "$_c"
}
