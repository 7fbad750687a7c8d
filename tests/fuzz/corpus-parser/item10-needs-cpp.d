#include "types.h"
#define UNUSED_MACRO 1
#ifdef HAVE_X
provider nc { probe a(); };
#endif
