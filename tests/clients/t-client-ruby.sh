#!/bin/bash
# A real client: Ruby's own DTrace tests (test/dtrace of Debian's ruby3.1
# source package, run against Debian's installed ruby3.1, whose libruby
# carries the probes) with this build's `dtrace` as the tracer. Ruby's
# helper.rb picks SystemTap's stap on Linux; it is told to use dtrace (the
# one edit), as on the systems DTrace came from.
#
# Verdicts, case by case:
#   every test but the five below     must pass;
#   test_function_entry, test_function_return (TestFunctionEntry),
#   test_entry, test_exit (TestSingletonFunctionEntry)
#                                     fail for Ruby's own reason: each traced
#                                     program starts with
#                                     `TracePoint.new{}.__enable(...)`, a
#                                     private method in this ruby, so the
#                                     program stops at its first line with
#                                     NoMethodError (checked: the program
#                                     fails the same way with no tracer). Run
#                                     again with the public
#                                     `TracePoint.new{}.enable` in its place,
#                                     all four must pass: test_entry's
#                                     predicate is
#                                     `strstr(copyinstr(arg0), "Foo") != NULL`;
#   test_method_cache_clear           fails for Ruby's own reason: this libruby
#                                     has no method-cache-clear site (checked
#                                     with readelf), so any DTrace refuses the
#                                     script ("does not match any probes").
# Needs Debian's source package (the realworld suite's private, verified
# apt configuration: tests/realworld/lib.sh), so it runs with --realworld.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/realworld/lib.sh"
rw_need_pkgs ruby3.1
RUBY=/usr/bin/ruby3.1
LIBRUBY=$(ldd "$RUBY" | sed -n 's/.*libruby[^ ]* => \([^ ]*\).*/\1/p')
[ -n "$LIBRUBY" ] || fail "$RUBY links no libruby"
readelf -n "$LIBRUBY" | grep -q 'Name: method__entry' || fail "$LIBRUBY carries no USDT notes"
rw_project ruby3.1-client

# The source, through the realworld suite's private apt configuration,
# without the .dsc's own signature (this upload's is made with SHA-1, which
# dpkg refuses): apt authenticates the .dsc and every tarball through the
# signed Release and Sources (rw_fetch, apt-chain, says why that is enough).
rw_fetch ruby3.1 apt-chain

mkdir -p "$T/bin" "$T/src"
# helper.rb runs `dtrace`: this one (its engine evaluates test_entry's
# strstr() predicate).
printf '#!/bin/sh\nexec "%s" "$@"\n' "$DTRACE" >"$T/bin/dtrace"
chmod +x "$T/bin/dtrace"
cp -r "$RW_SRC/test" "$RW_SRC/tool" "$T/src/"
sed -i 's/^  impl = :stap$/  impl = :dtrace # usdtkit: dtrace(1)/' "$T/src/test/dtrace/helper.rb"
grep -q 'impl = :dtrace # usdtkit' "$T/src/test/dtrace/helper.rb" ||
	fail "helper.rb: its 'impl = :stap' line is not there to edit"

run_tests() { # OUT
	(cd "$T/src" && env -u PYTHONUNBUFFERED PATH="$T/bin:$PATH" timeout 900 \
		"$RUBY" --disable=gems tool/test/runner.rb -v test/dtrace) >"$1" 2>&1 || true
	grep -E '^[0-9]+ tests, ' "$1" || { tail -30 "$1" >&2; fail "Ruby's runner did not finish"; }
}
failed() { # OUT -> Class#test per line
	sed -n 's/^\(DTrace::[A-Za-z]*#test_[a-z_]*\) \[.*/\1/p' "$1" | sort
}

run_tests "$T/run1"
failed "$T/run1" >"$T/failed1"
printf '%s\n' DTrace::TestFunctionEntry#test_function_entry DTrace::TestFunctionEntry#test_function_return \
	DTrace::TestMethodCacheClear#test_method_cache_clear DTrace::TestSingletonFunctionEntry#test_entry \
	DTrace::TestSingletonFunctionEntry#test_exit | sort >"$T/known"
if ! cmp -s "$T/known" "$T/failed1"; then
	grep -A8 'Failure:\|Error:' "$T/run1" >&2
	echo "failed:" >&2
	cat "$T/failed1" >&2
	fail "test/dtrace: the failures are not exactly Ruby's own five (above)"
fi
grep -q ' 0 errors, 0 skips' "$T/run1" || { tail -5 "$T/run1" >&2; fail "test/dtrace: errors or skips"; }

# The reasons. __enable: the program fails alone, with no tracer.
"$RUBY" --disable=gems -e 'TracePoint.new{}.__enable(nil, nil, Thread.current)' 2>"$T/enable.err" &&
	fail "this ruby runs TracePoint#__enable: the four failures would be usdtkit's"
expect_grep "undefined method .__enable'" "$T/enable.err" "the program's own failure"
[ "$(grep -c "undefined method .__enable'" "$T/run1")" -ge 4 ] ||
	fail "the four function-entry failures are not the program's NoMethodError"
# method-cache-clear: no site in libruby.
readelf -n "$LIBRUBY" | grep -q 'Name: method__cache__clear' &&
	fail "$LIBRUBY has a method-cache-clear site: test_method_cache_clear's failure would be usdtkit's"
expect_grep 'method-cache-clear does not match any probes' "$T/run1" "method-cache-clear refused as DTrace refuses it"

# The four again with the public call that turns the VM's hooks on (what
# __enable was for: without hooks, this ruby fires no method-entry): they pass.
sed -i 's/TracePoint.new{}.__enable(nil, nil, Thread.current)/TracePoint.new{}.enable/' \
	"$T/src/test/dtrace/test_function_entry.rb" "$T/src/test/dtrace/test_singleton_function.rb"
run_tests "$T/run2"
failed "$T/run2" >"$T/failed2"
echo DTrace::TestMethodCacheClear#test_method_cache_clear >"$T/known2"
cmp -s "$T/known2" "$T/failed2" || {
	grep -A8 'Failure:\|Error:' "$T/run2" >&2
	fail "test/dtrace with TracePoint#enable: failed $(tr '\n' ' ' <"$T/failed2")"
}
echo "ruby3.1 test/dtrace: $(grep -E '^[0-9]+ tests, ' "$T/run1"); the five failures are Ruby's own;" \
	"with the public TracePoint call the four method-entry tests pass (strstr predicate included)"
exit 0
