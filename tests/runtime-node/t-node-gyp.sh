#!/bin/bash
# The npm way (bindings/node/README.md): the package directory, copied,
# built by node-gyp against this build's libusdtkit-runtime (its
# meson-uninstalled/ usdtkit-runtime.pc on PKG_CONFIG_PATH), offline, then
# `npm install`ed into a scratch application as its dtrace-provider; there
# `require('dtrace-provider')` is the API, with the node-gyp addon (not the
# meson one, not the stub).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-node/lib.sh"
need_node_addon
unset USDTKIT_NODE_ADDON
command -v npm >/dev/null || fail "npm is not installed (scripts/deps.sh installs nodejs)"
command -v pkg-config >/dev/null || fail "pkg-config is not installed"

# npm's own node-gyp (nodesource's nodejs), else Debian's node-gyp; the
# headers beside node (nodesource: /usr/include/node under prefix /usr),
# else Debian's libnode-dev tree.
GYP=$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js
if [ -e "$GYP" ]; then
	GYP=(command node "$GYP")
elif command -v node-gyp >/dev/null; then
	GYP=(node-gyp)
else
	fail "no node-gyp: neither npm's nor Debian's node-gyp package"
fi
NODEDIR=$(node -p 'require("path").resolve(process.execPath, "../..")')
[ -e "$NODEDIR/include/node/common.gypi" ] || NODEDIR=/usr/include/nodejs
[ -e "$NODEDIR/include/node/common.gypi" ] || [ -e "$NODEDIR/common.gypi" ] ||
	fail "node-gyp needs Node's common.gypi: not under $(dirname "$(dirname "$(command -v node)")") nor /usr/include/nodejs"

# No user configuration, no network: npm's cache and config in $T.
export HOME="$T" npm_config_cache="$T/npm-cache" npm_config_nodedir="$NODEDIR"
export PKG_CONFIG_PATH="$USDTKIT_BUILDDIR/meson-uninstalled"
# node-gyp's make generator writes cflags and libraries unquoted (gyp's
# QuoteIfNecessary quotes only a string holding a '"'): no path with a blank
# reaches the compiler through it, whatever pkg-config escapes. From a tree
# under such a path the .pc files name the trees through blank-free links
# (an installed usdtkit is under /usr).
case $USDTKIT_BUILDDIR$USDTKIT_SRCDIR in *[[:space:]]*)
	ln -s "$USDTKIT_BUILDDIR" "$T/builddir"
	ln -s "$USDTKIT_SRCDIR" "$T/srcdir"
	mkdir "$T/pc"
	for f in "$PKG_CONFIG_PATH"/*.pc; do
		sed -e "s|^prefix=.*|prefix=$T/builddir|" -e "s|^srcdir=.*|srcdir=$T/srcdir|" "$f" \
			>"$T/pc/${f##*/}"
	done
	PKG_CONFIG_PATH="$T/pc"
	;;
esac

cp -r "$NODE_PKG" "$T/pkg"
rm -rf "$T/pkg/build"
(cd "$T/pkg" && "${GYP[@]}" rebuild --nodedir="$NODEDIR") >"$T/gyp.log" 2>&1 ||
	{ cat "$T/gyp.log" >&2; fail "node-gyp rebuild failed"; }
ADDON="$T/pkg/build/Release/usdtkit_dtrace_provider.node"
[ -e "$ADDON" ] || fail "node-gyp built no $ADDON"
readelf -d "$ADDON" | grep -q 'NEEDED.*\[libusdtkit-runtime\.so\.0\]' ||
	fail "the node-gyp addon does not link libusdtkit-runtime.so.0"

mkdir "$T/app"
cat >"$T/app/package.json" <<'EOF2'
{ "name": "scratch-app", "version": "1.0.0", "private": true }
EOF2
# --install-links=false: a link to the directory, as npm 10 and later do by default (npm 9,
# Debian 12's, would pack a copy)
(cd "$T/app" && npm install --offline --no-audit --no-fund --install-links=false "$T/pkg") >"$T/npm.log" 2>&1 ||
	{ cat "$T/npm.log" >&2; fail "npm install of the package directory failed"; }
grep -qE '"dtrace-provider": ?"file:' "$T/app/package.json" ||
	{ cat "$T/app/package.json" >&2; fail "the app does not depend on dtrace-provider"; }

cat >"$T/app/main.js" <<'EOF2'
const d = require('dtrace-provider');
const dtp = d.createDTraceProvider('scratchapp');
const p1 = dtp.addProbe('p1', 'int', 'char *');
dtp.enable();
const fired = p1.fire(() => { throw new Error('called while disabled'); });
dtp.disable();
console.log(d.DTraceProvider.name, typeof p1.__prov__, String(fired),
	require.resolve('dtrace-provider').replace(process.env.T, '$T'));
EOF2
# (the library from the build tree: the .pc's -L is not a run path)
out=$(cd "$T/app" && T=$T LD_LIBRARY_PATH="$USDTKIT_BUILDDIR/runtime" USDTKIT_HELPER_SOCKET="$T/none" \
	node main.js 2>"$T/main.err") || { cat "$T/main.err" >&2; fail "the app failed"; }
# (npm links a local directory: node resolves the link)
expect_eq "$out" 'DTraceProvider object undefined $T/pkg/dtrace-provider.js' \
	"the app's dtrace-provider"
# The addon it loaded is node-gyp's.
(cd "$T/app" && LD_LIBRARY_PATH="$USDTKIT_BUILDDIR/runtime" node -e '
	require("dtrace-provider");
	const m = Object.keys(require.cache).filter((f) => f.endsWith(".node"));
	console.log(m.join(" "));') >"$T/loaded" || fail "listing the loaded addon"
expect_eq "$(cat "$T/loaded")" "$T/pkg/build/Release/usdtkit_dtrace_provider.node" "the addon loaded"
echo PASS
