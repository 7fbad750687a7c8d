/*
 * Two static functions named helper, one per unit (LT_UNIT a or b): linked
 * with -flto, GCC renames them helper.lto_priv.0 and helper.lto_priv.1.
 * Compiled twice by t-list-clones; lt_report, cold, lives here too.
 */
#include <sys/sdt.h>

#define LT_CAT_(a, b) a##b
#define LT_CAT(a, b) LT_CAT_(a, b)

volatile int LT_CAT(lt_sink_, LT_UNIT);

static __attribute__((noinline)) int helper(int x)
{
	STAP_PROBE1(ltclone, LT_CAT(lto__site__, LT_UNIT), x);
	LT_CAT(lt_sink_, LT_UNIT) += x;
	return LT_CAT(lt_sink_, LT_UNIT);
}

int LT_CAT(lt_entry_, LT_UNIT)(int x)
{
	return helper(x) + helper(x + 1);
}

#ifdef LT_REPORT
void lt_report(int x)
{
	LT_CAT(lt_sink_, LT_UNIT) += x;
}
#endif
