#!/bin/sh
# Builds usdtkit's Debian packages the way a distribution does: from the
# committed tree (git archive HEAD, so nothing of the working tree or of an
# earlier build leaks in), in a scratch directory, with
# `dpkg-buildpackage -us -uc -b`, and the source package with
# `dpkg-source -b`. Leaves in OUTDIR (default: build-deb) the .debs, the
# .changes/.buildinfo and the .dsc/.tar.xz, nothing else.
#
#   sh packaging/debian/build.sh [OUTDIR]
#
# Needs dpkg-dev, debhelper and the Build-Depends of debian/control
# (dpkg-checkbuilddeps says which are missing). Root is not needed
# (Rules-Requires-Root: no). DEB_BUILD_OPTIONS is honoured (nocheck skips
# the provider tests). USDTKIT_DEB_SCRATCH: the parent of the scratch
# directory (default: TMPDIR or /tmp); packaging/debian/check.sh builds
# twice under two of them to prove the result does not depend on the path.
# USDTKIT_DEB_VERSION=V: build as version V (a changelog entry is added in
# the scratch copy), for the upgrade test (test-lifecycle.sh).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build-deb}
for c in git dpkg-buildpackage dpkg-source dpkg-parsechangelog; do
	command -v "$c" >/dev/null || {
		echo "build.sh: $c is not installed (apt-get install dpkg-dev debhelper)" >&2
		exit 1
	}
done
. "$top/scripts/lib/head.sh"
commit=$(head_commit build.sh "$top")
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
upstream=${version%%-*}
scratch=$(mktemp -d "${USDTKIT_DEB_SCRATCH:-${TMPDIR:-/tmp}}/usdtkit-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM
src=$scratch/usdtkit-$upstream
mkdir "$src"
# git archive gives every file the commit's time, not the extraction's.
git -C "$top" archive --format=tar "$commit" | tar -x -C "$src"
if [ -n "${USDTKIT_DEB_VERSION:-}" ]; then
	version=$USDTKIT_DEB_VERSION
	{
		printf 'usdtkit (%s) UNRELEASED; urgency=medium\n\n  * Test build of %s.\n\n' "$version" "$commit"
		printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -l "$src/debian/changelog" -S Maintainer)" \
			"$(dpkg-parsechangelog -l "$src/debian/changelog" -S Date)"
		cat "$src/debian/changelog"
	} >"$scratch/changelog"
	mv "$scratch/changelog" "$src/debian/changelog"
fi
# The source package first, from the pristine tree (format 3.0 (native)
# packs the whole directory).
(cd "$scratch" && dpkg-source -b "usdtkit-$upstream" >"$scratch/source.log" 2>&1) || {
	cat "$scratch/source.log" >&2
	echo "build.sh: dpkg-source -b failed" >&2
	exit 1
}
(
	cd "$src"
	dpkg-checkbuilddeps || {
		echo "build.sh: install the missing Build-Depends above" >&2
		exit 1
	}
	dpkg-buildpackage -us -uc -b >"$scratch/build.log" 2>&1 || {
		tail -40 "$scratch/build.log" >&2
		echo "build.sh: dpkg-buildpackage failed (the end of its log is above)" >&2
		exit 1
	}
)
mkdir -p "$out"
for f in "$scratch"/*.deb "$scratch"/*.changes "$scratch"/*.buildinfo "$scratch"/*.dsc \
	"$scratch"/*.tar.xz; do
	[ -e "$f" ] && cp "$f" "$out/"
done
echo "build.sh: usdtkit $version from $commit:"
(cd "$out" && ls -1 ./*"_${version}_"*.deb | sed 's|^\./|  |')
