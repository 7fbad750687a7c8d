/* SPDX-License-Identifier: MIT */
/*
 * The probes of warnpat.d straight on <sys/sdt.h>, numbered STAP_PROBEn and DTRACE_PROBEn
 * macros alike, under the names `dtrace -h` gives them: the patterns include this or the
 * generated header.
 */
#include <sys/sdt.h>

#define WARNPAT_MEM_ALLOC(a1, a2) STAP_PROBE2(warnpat, mem__alloc, a1, a2)
#define WARNPAT_MEM_FREE(a1) DTRACE_PROBE1(warnpat, mem__free, a1)
#define WARNPAT_MEM_REALLOC(a1, a2, a3, a4) STAP_PROBE4(warnpat, mem__realloc, a1, a2, a3, a4)
#define WARNPAT_EXECUTE_ENTRY(a1, a2) DTRACE_PROBE2(warnpat, execute__entry, a1, a2)
#define WARNPAT_EXECUTE_RETURN(a1, a2) STAP_PROBE2(warnpat, execute__return, a1, a2)
#define WARNPAT_REQUEST_DONE(a1, a2, a3) STAP_PROBE3(warnpat, request__done, a1, a2, a3)
#define WARNPAT_VALUES(a1, a2, a3, a4) DTRACE_PROBE4(warnpat, values, a1, a2, a3, a4)
#define WARNPAT_FLAGS(a1, a2, a3) STAP_PROBE3(warnpat, flags, a1, a2, a3)
#define WARNPAT_BUFFER(a1, a2, a3) DTRACE_PROBE3(warnpat, buffer, a1, a2, a3)
#define WARNPAT_CALLBACK(a1, a2, a3) STAP_PROBE3(warnpat, callback, a1, a2, a3)
#define WARNPAT_STATE(a1, a2, a3) DTRACE_PROBE3(warnpat, state, a1, a2, a3)
#define WARNPAT_ATOMIC(a1, a2, a3) STAP_PROBE3(warnpat, atomic, a1, a2, a3)
#define WARNPAT_RESULT(a1, a2, a3) DTRACE_PROBE3(warnpat, result, a1, a2, a3)
#define WARNPAT_MEMBER(a1, a2, a3, a4) STAP_PROBE4(warnpat, member, a1, a2, a3, a4)
#define WARNPAT_LITERAL(a1, a2, a3) DTRACE_PROBE3(warnpat, literal, a1, a2, a3)
