/* SPDX-License-Identifier: CC0-1.0 */
/*
 * <sys/sdt.h>: statically defined tracing probes for Linux (usdtkit).
 *
 * License: CC0-1.0. To the extent possible under law, the usdtkit authors have waived all
 * copyright and related rights to this file: copy it into any program, free or proprietary,
 * under any license (https://creativecommons.org/publicdomain/zero/1.0/).
 *
 * Theory
 * ------
 * A probe site is one no-op instruction plus an ELF note describing it. Nothing runs when no
 * tracer is attached; a tracer (gdb, bpftrace, perf, bcc, libbpf, SystemTap) finds the note,
 * plants a breakpoint on the no-op and decodes the arguments from the note's operand strings.
 * This header is a drop-in replacement for SystemTap's <sys/sdt.h>: it keeps every public macro
 * (STAP_PROBE, STAP_PROBE1..12, DTRACE_PROBE*, STAP_PROBEV, the STAP_PROBE_ASM family, use from
 * .S files, _SDT_HAS_SEMAPHORES, STAP_SDT_ARG_CONSTRAINT) and emits byte-compatible "v3" notes:
 *
 *   section .note.stapsdt (joins the function's COMDAT group with "?"), owner "stapsdt", type 3,
 *   desc = pc, address of _.stapsdt.base, semaphore address or 0 (8-byte fields on LP64, 4-byte
 *   otherwise), then NUL-terminated provider, name and "[-]SIZE@OPERAND ..." argument string.
 *
 * What it does differently, and why:
 *  - Operands are only forms that every consumer parses: a register, an immediate, or (i386, and
 *    STAP_SDT_ARG_CONSTRAINT overrides) displacement(register) with the displacement written.
 *    On x86-64 the constraint is "nr", so the compiler never picks memory: no symbol(%rip), no
 *    SIB, no clang red-zone slot below %rsp (LLVM #20571), no "(%rsp)" without displacement.
 *    Registers get their 64-bit names (%rax, %r12) whatever the value's width: the SIZE before
 *    "@" governs, and gdb 13 rejects the byte names %r8b..%r15b.
 *    i386 has too few registers for 12 arguments and keeps 8-byte values in register pairs no
 *    consumer can name, so there each argument is copied to a local and passed in memory ("nm",
 *    which costs a store per argument even when the probe is disabled); a GAS macro writes the
 *    "(%esp)" a compiler prints for a zero displacement as "0(%esp)".
 *    aarch64 uses "r" and 64-bit names (x0, never w0): some consumers only know x registers.
 *  - No "f" suffix: several consumers reject it. Floating-point values travel as their raw IEEE
 *    bits, recorded as unsigned integers of the value's size (read a u32/u64, reinterpret).
 *  - A struct, union, _Complex, __int128 or long double argument is a compile-time error whose
 *    text names the provider, the probe and the argument position; so are 13 arguments
 *    (STAP_PROBE13, DTRACE_PROBE13, STAP_PROBEV). A bit-field is refused by sizeof: the
 *    compiler's own "bit-field" error comes first, the probe is named in its context lines.
 *  - The argument size and sign are printed with "%c" from a constant operand instead of
 *    SystemTap's .altmacro assembler macros (which leave the assembler in altmacro mode).
 *  - .stapsdt.base carries SHF_GNU_RETAIN ("R"), so ld.lld and gold with --gc-sections keep it;
 *    without it every note's base resolves to 0 and consumers skip or misplace the probes.
 *  - GCC sizes asm statements by their line count when it decides what to inline; the probe's
 *    asm is padded with empty lines so a probed function weighs what it weighs with SystemTap's
 *    header, and a project gets the same probe sites with either header (_SDT_WEIGHT_n).
 *  - The site is _SDT_NOP, by default a single-byte "nop" (x86) / "nop" (aarch64). Do not make
 *    it a 5-byte nop on x86: Linux 6.18 optimises uprobes on nop5 into a call that breaks
 *    children forked afterwards and overwrites the red zone.
 *
 * Every argument is evaluated exactly once, as with SystemTap. Arrays and functions are
 * recorded as pointers. Semaphores (with _SDT_HAS_SEMAPHORES, as `dtrace -h` headers define it)
 * are `unsigned short <provider>_<name>_semaphore`, defined by the user or by `dtrace -G`; as in
 * SystemTap, every probe of a file then references its semaphore.
 *
 * Public macros:
 *   STAP_PROBE(p, n), STAP_PROBE1(p, n, a1) .. STAP_PROBE12, DTRACE_PROBE, DTRACE_PROBE1..12
 *                            also in .S files, with literal specs: STAP_PROBE1(p, n, -8@%rdi)
 *   STAP_PROBEV(p, n, ...)   with SDT_USE_VARIADIC, 0 to 12 arguments
 *   STAP_PROBE_ASM(p, n, literal specs | STAP_PROBE_ASM_TEMPLATE(k)) inside an asm statement,
 *   STAP_PROBE_ASM_OPERANDS(k, a1, ...) in its operand list (C99 / C++11: variadic macros)
 * Knobs, all read when this header is included:
 *   STAP_SDT_ARG_CONSTRAINT  asm constraint for every argument (e.g. g); operands are then
 *                            printed as the compiler chooses, as SystemTap does
 *   _SDT_NOP                 the probe-site instruction (one instruction, no comma, % as %%)
 *   _SDT_ASM_BASE_FLAGS      "aG" for assemblers without the R section flag
 *   _SDT_ASM_SECTION_AUTOGROUP_SUPPORT  0 for assemblers without the "?" section flag
 *   _SDT_HAS_SEMAPHORES      (or STAP_HAS_SEMAPHORES) probes reference their semaphores
 *   SDT_USE_VARIADIC         defines STAP_PROBEV
 */

#ifndef _SYS_SDT_H
#define _SYS_SDT_H 1

#define _USDTKIT_SDT_H 1

/* A system header, as SystemTap's is from /usr/include, wherever this copy lives (-I, a
 * vendored copy). Warnings located in the macros' own text are then not reported: the probe's
 * asm reads each value, so GCC would report at the asm line a pointer traced after free()
 * (-Wuse-after-free) or a value set on only some paths (-Wmaybe-uninitialized), and
 * -Wpedantic would flag variadic macros before C99. Warnings about the caller's own argument
 * expressions (p->len after free(p)) keep the caller's location and are still reported. */
#pragma GCC system_header

#if defined STAP_HAS_SEMAPHORES && !defined _SDT_HAS_SEMAPHORES
#define _SDT_HAS_SEMAPHORES 1
#endif

/* ---- pieces shared by C and assembler ------------------------------------------------------ */

#ifdef __LP64__
#define _SDT_ASM_ADDR .8byte
#else
#define _SDT_ASM_ADDR .4byte
#endif

#ifndef _SDT_NOP
#if defined __ia64__ || defined __s390__ || defined __s390x__
#define _SDT_NOP nop 0
#else
#define _SDT_NOP nop
#endif
#endif

#define _SDT_NOTE_NAME "stapsdt"
#define _SDT_NOTE_TYPE 3

/* "?" puts the note in the COMDAT group of the code around it, so a discarded copy of a C++
 * inline function takes its notes with it (both gas >= 2.22 and clang's assembler have it). */
#ifndef _SDT_ASM_SECTION_AUTOGROUP_SUPPORT
#define _SDT_ASM_SECTION_AUTOGROUP_SUPPORT 1
#endif
#if _SDT_ASM_SECTION_AUTOGROUP_SUPPORT
#define _SDT_ASM_AUTOGROUP "?"
#else
#define _SDT_ASM_AUTOGROUP ""
#endif

/* Section flags of .stapsdt.base. "R" (SHF_GNU_RETAIN) needs binutils >= 2.36 or LLVM >= 13;
 * define _SDT_ASM_BASE_FLAGS "aG" for older assemblers. */
#ifndef _SDT_ASM_BASE_FLAGS
#define _SDT_ASM_BASE_FLAGS "aGR"
#endif

#ifdef __ASSEMBLER__
/* In .S files each line becomes a statement of its own; the operands are literal text. */
#define _SDT_ASM_1(x) x;
#define _SDT_ASM_2(a, b) a, b;
#define _SDT_ASM_3(a, b, c) a, b, c;
#define _SDT_ASM_5(a, b, c, d, e) a, b, c, d, e;
#define _SDT_ASM_STRING_1(x) .asciz #x;
#define _SDT_ASM_SUBSTR_1(x) .ascii #x;
#else
#define _SDT_S(x) #x
#define _SDT_ASM_1(x) _SDT_S(x) "\n"
#define _SDT_ASM_2(a, b) _SDT_S(a) "," _SDT_S(b) "\n"
#define _SDT_ASM_3(a, b, c) _SDT_S(a) "," _SDT_S(b) "," _SDT_S(c) "\n"
#define _SDT_ASM_5(a, b, c, d, e) \
	_SDT_S(a) "," _SDT_S(b) "," _SDT_S(c) "," _SDT_S(d) "," _SDT_S(e) "\n"
#define _SDT_ASM_STRING_1(x) _SDT_ASM_1(.asciz #x)
#define _SDT_ASM_SUBSTR_1(x) _SDT_ASM_1(.ascii #x)
#endif
#define _SDT_ASM_STRING(x) _SDT_ASM_STRING_1(x)
#define _SDT_ASM_SUBSTR(x) _SDT_ASM_SUBSTR_1(x)
#define _SDT_ASM_BLANK _SDT_ASM_SUBSTR(\x20)

#if defined _SDT_HAS_SEMAPHORES
#define _SDT_SEMAPHORE(p, n) _SDT_ASM_1(_SDT_ASM_ADDR p##_##n##_semaphore)
#else
#define _SDT_SEMAPHORE(p, n) _SDT_ASM_1(_SDT_ASM_ADDR 0)
#endif

/* The note. `pack_args args` expands to the argument string (without its final NUL). */
#define _SDT_ASM_BODY_(provider, name, pack_args, args)                                     \
	_SDT_ASM_1(990: _SDT_NOP)                                                           \
	_SDT_ASM_3(.pushsection .note.stapsdt, _SDT_ASM_AUTOGROUP, "note")                  \
	_SDT_ASM_1(.balign 4)                                                               \
	_SDT_ASM_3(.4byte 992f-991f, 994f-993f, _SDT_NOTE_TYPE)                             \
	_SDT_ASM_1(991: .asciz _SDT_NOTE_NAME)                                              \
	_SDT_ASM_1(992: .balign 4)                                                          \
	_SDT_ASM_1(993: _SDT_ASM_ADDR 990b)                                                 \
	_SDT_ASM_1(_SDT_ASM_ADDR _.stapsdt.base)                                            \
	_SDT_SEMAPHORE(provider, name)                                                      \
	_SDT_ASM_STRING(provider)                                                           \
	_SDT_ASM_STRING(name)                                                               \
	pack_args args                                                                      \
	_SDT_ASM_SUBSTR(\x00)                                                               \
	_SDT_ASM_1(994: .balign 4)                                                          \
	_SDT_ASM_1(.popsection)

/* One weak hidden byte per object file (a COMDAT group, so one per linked object), which
 * consumers use to undo prelink-style address changes. Retained against --gc-sections. */
#define _SDT_ASM_BASE                                                                       \
	_SDT_ASM_1(.ifndef _.stapsdt.base)                                                  \
	_SDT_ASM_5(.pushsection .stapsdt.base, _SDT_ASM_BASE_FLAGS, "progbits",             \
		   .stapsdt.base, comdat)                                                   \
	_SDT_ASM_1(.weak _.stapsdt.base)                                                    \
	_SDT_ASM_1(.hidden _.stapsdt.base)                                                  \
	_SDT_ASM_1(_.stapsdt.base: .space 1)                                                \
	_SDT_ASM_2(.size _.stapsdt.base, 1)                                                 \
	_SDT_ASM_1(.popsection)                                                             \
	_SDT_ASM_1(.endif)

#ifdef __ASSEMBLER__

#define _SDT_DEPAREN_0()
#define _SDT_DEPAREN_1(a) a
#define _SDT_DEPAREN_2(a, b) a b
#define _SDT_DEPAREN_3(a, b, c) a b c
#define _SDT_DEPAREN_4(a, b, c, d) a b c d
#define _SDT_DEPAREN_5(a, b, c, d, e) a b c d e
#define _SDT_DEPAREN_6(a, b, c, d, e, f) a b c d e f
#define _SDT_DEPAREN_7(a, b, c, d, e, f, g) a b c d e f g
#define _SDT_DEPAREN_8(a, b, c, d, e, f, g, h) a b c d e f g h
#define _SDT_DEPAREN_9(a, b, c, d, e, f, g, h, i) a b c d e f g h i
#define _SDT_DEPAREN_10(a, b, c, d, e, f, g, h, i, j) a b c d e f g h i j
#define _SDT_DEPAREN_11(a, b, c, d, e, f, g, h, i, j, k) a b c d e f g h i j k
#define _SDT_DEPAREN_12(a, b, c, d, e, f, g, h, i, j, k, l) a b c d e f g h i j k l
#define _SDT_ASM_BODY(provider, name, pack_args, args) \
	_SDT_ASM_BODY_(provider, name, pack_args, args)
#define _SDT_PROBE(provider, name, n, arglist)                                              \
	_SDT_ASM_BODY_(provider, name, _SDT_ASM_SUBSTR_1, (_SDT_DEPAREN_##n arglist))       \
	_SDT_ASM_BASE

#else /* C and C++ */

/* ---- argument classification ------------------------------------------------------------- */

#ifdef __cplusplus
/* Templates need C++ linkage; programs include this header inside extern "C" { } too. */
extern "C++" {
/* Declared only, used only in __typeof__: the decayed, unqualified type of an argument. */
template <typename __sdt_T> __sdt_T __sdt_decay(__sdt_T);
template <typename __sdt_T> struct __sdt_type {
	static const bool __sdt_signed = static_cast<__sdt_T>(-1) < static_cast<__sdt_T>(1);
};
template <typename __sdt_T> struct __sdt_type<__sdt_T *> {
	static const bool __sdt_signed = false;
};
template <typename __sdt_T, typename __sdt_C> struct __sdt_type<__sdt_T __sdt_C::*> {
	static const bool __sdt_signed = false;
};
/* Floating-point values are recorded as their raw bits, unsigned. */
template <> struct __sdt_type<bool> { static const bool __sdt_signed = false; };
template <> struct __sdt_type<float> { static const bool __sdt_signed = false; };
template <> struct __sdt_type<double> { static const bool __sdt_signed = false; };
template <> struct __sdt_type<long double> { static const bool __sdt_signed = false; };
#if __cplusplus >= 201103L
template <> struct __sdt_type<decltype(nullptr)> { static const bool __sdt_signed = false; };
#endif
}
#define _SDT_ARGTYPE(x) __typeof__(__sdt_decay(x))
#define _SDT_ARGSIGNED(x) (__sdt_type<_SDT_ARGTYPE(x)>::__sdt_signed)
#define _SDT_ARGARRAY(x) (__builtin_classify_type(x) == 14 || __builtin_classify_type(x) == 5)
/* Arrays and functions are passed, and recorded, as pointers. */
#define _SDT_ARGSIZE(x) sizeof(_SDT_ARGTYPE(x))
/* A scalar of at most 8 bytes; sizeof (x) rejects bit-fields. */
#define _SDT_ARGOK(x)                                                                       \
	(sizeof(x) != 0 && !__is_class(_SDT_ARGTYPE(x)) && !__is_union(_SDT_ARGTYPE(x)) &&   \
	 _SDT_ARGSIZE(x) <= 8)
#else
/* __builtin_classify_type: 5 pointer, 9 complex, 10 function, 12 struct, 13 union, 14 array. */
#define _SDT_ARGARRAY(x) (__builtin_classify_type(x) == 14 || __builtin_classify_type(x) == 5)
#define _SDT_ARGSIZE(x) (_SDT_ARGARRAY(x) || __builtin_classify_type(x) == 10 \
			 ? sizeof(void *) : sizeof(x))
/* A scalar of at most 8 bytes: sizeof (x) also rejects bit-fields. */
#define _SDT_ARGOK(x)                                                                      \
	(__builtin_classify_type(x) != 9 && __builtin_classify_type(x) != 12 &&              \
	 __builtin_classify_type(x) != 13 && _SDT_ARGSIZE(x) <= 8)
/* The integer type of x, or unsigned int for pointers, floating point and the rest. The comma
 * drops qualifiers, _Atomic too, which clang's __typeof__ would keep (and then refuse the cast). */
#define _SDT_ARGINTTYPE(x)                                                                  \
	__typeof__(__builtin_choose_expr(((__builtin_classify_type(x) + 3) & -4) == 4,       \
					 ((void)0, (x)), 0U))
#define _SDT_ARGSIGNED(x) (!((_SDT_ARGINTTYPE(x))-1 > (_SDT_ARGINTTYPE(x))0))
#define _SDT_ARGTYPE(x) __typeof__(((void)0, (x)))
#endif
/* The value operand. An rvalue of the argument's own type keeps constants constant, so "n"
 * prints them as immediates; arrays and functions decay to pointers. */
#define _SDT_ARGVAL(x) (x)

/* Size and sign in one constant: -SIZE for signed, SIZE otherwise, printed with %c. */
#ifdef __cplusplus
/* !_SDT_ARGARRAY changes nothing (pointers are unsigned already): it makes clang's
 * -Wsometimes-uninitialized take the argument as seen before the asm reads it, as in C here and
 * in SystemTap's header, which passes every argument to __builtin_classify_type too. */
#define _SDT_ARGSZ(x) (!_SDT_ARGARRAY(x) && _SDT_ARGSIGNED(x)                              \
			       ? -static_cast<int>(_SDT_ARGSIZE(x))                         \
			       : static_cast<int>(_SDT_ARGSIZE(x)))
#else
#define _SDT_ARGSZ(x) (_SDT_ARGSIGNED(x) ? -(int)_SDT_ARGSIZE(x) : (int)_SDT_ARGSIZE(x))
#endif

/* ---- operand constraint and printing, per architecture ----------------------------------- */

#define _SDT_STRINGIFY(x) #x
#define _SDT_ARG_CONSTRAINT_STRING(x) _SDT_STRINGIFY(x)

#if defined STAP_SDT_ARG_CONSTRAINT
/* The user's constraint: print the operand exactly as the compiler chooses (SystemTap). */
#define _SDT_ARG_CONSTRAINT _SDT_ARG_CONSTRAINT_STRING(STAP_SDT_ARG_CONSTRAINT)
#if defined __powerpc__ || defined __powerpc64__
#define _SDT_ARGTMPL(id) "%I[" id "]%[" id "]"
#elif defined __i386__
#define _SDT_ARGTMPL(id) "%k[" id "]"
#else
#define _SDT_ARGTMPL(id) "%[" id "]"
#endif
#elif defined __x86_64__
#define _SDT_ARG_CONSTRAINT "nr"
#define _SDT_ARGTMPL(id) "%q[" id "]"
#elif defined __i386__
#define _SDT_ARG_CONSTRAINT "nm"
#define _SDT_ARGTMPL(id) "%[" id "]"
#define _SDT_ARG_IN_MEMORY 1
#elif defined __aarch64__
#define _SDT_ARG_CONSTRAINT "r"
#define _SDT_ARGTMPL(id) "%x[" id "]"
#elif defined __powerpc__ || defined __powerpc64__
#define _SDT_ARG_CONSTRAINT "nZr"
#define _SDT_ARGTMPL(id) "%I[" id "]%[" id "]"
#elif defined __ia64__
#define _SDT_ARG_CONSTRAINT "nr"
#define _SDT_ARGTMPL(id) "%[" id "]"
#elif defined __arm__
#define _SDT_ARG_CONSTRAINT "nr"
#define _SDT_ARGTMPL(id) "%[" id "]"
#else
#define _SDT_ARG_CONSTRAINT "nr"
#define _SDT_ARGTMPL(id) "%[" id "]"
#endif

/* Operands for STAP_PROBE_ASM_OPERANDS: the value itself, no temporary (the user's asm
 * statement has no room for declarations). On i386 an 8-byte value here is named by one
 * register of its pair, as with SystemTap; use STAP_PROBEn for those. */
#if defined _SDT_ARG_IN_MEMORY
#define _SDT_DIRECT_CONSTRAINT "nr"
#define _SDT_DIRECT_ARGTMPL(id) "%k[" id "]"
#else
#define _SDT_DIRECT_CONSTRAINT _SDT_ARG_CONSTRAINT
#define _SDT_DIRECT_ARGTMPL(id) _SDT_ARGTMPL(id)
#endif
#define _SDT_ARG(n, x) \
	[_SDT_S##n] "n"(_SDT_ARGSZ(x)), [_SDT_A##n] _SDT_DIRECT_CONSTRAINT(_SDT_ARGVAL(x))

/* One argument's text: "[-]SIZE@OPERAND". */
#define _SDT_ARGFMT_DIRECT(no) \
	".ascii \"%c[_SDT_S" #no "]@" _SDT_DIRECT_ARGTMPL("_SDT_A" #no) "\"\n"
#if defined _SDT_ARG_IN_MEMORY
/* i386: arguments live in locals; _SDT_OPND writes "0(%esp)" for the "(%esp)" the compiler
 * prints for a zero displacement, which some consumers cannot parse. */
#define _SDT_ARGFMT(no) ".ascii \"%c[_SDT_S" #no "]@\"\n_SDT_OPND %[_SDT_A" #no "]\n"
#define _SDT_OPND_REG(r) ".ifc \"\\op\",\"(%%" r ")\"\n.ascii \"0(%%" r ")\"\n.else\n"
#define _SDT_DEF_MACROS                                                                     \
	".macro _SDT_OPND op\n" _SDT_OPND_REG("esp") _SDT_OPND_REG("ebp")                   \
		_SDT_OPND_REG("eax") _SDT_OPND_REG("ebx") _SDT_OPND_REG("ecx")              \
			_SDT_OPND_REG("edx") _SDT_OPND_REG("esi") _SDT_OPND_REG("edi")      \
	".ascii \"\\op\"\n"                                                                 \
	".endif\n.endif\n.endif\n.endif\n.endif\n.endif\n.endif\n.endif\n"                  \
	".endm\n"
#define _SDT_UNDEF_MACROS ".purgem _SDT_OPND\n"
#define _SDT_TMP(n, x) _SDT_ARGTYPE(x) __sdt_a##n = (x);
#define _SDT_OPERAND(n, x) \
	[_SDT_S##n] "n"(_SDT_ARGSZ(x)), [_SDT_A##n] _SDT_ARG_CONSTRAINT(__sdt_a##n)
#else
#define _SDT_ARGFMT(no) _SDT_ARGFMT_DIRECT(no)
#define _SDT_DEF_MACROS ""
#define _SDT_UNDEF_MACROS ""
#define _SDT_TMP(n, x)
#define _SDT_OPERAND(n, x) \
	[_SDT_S##n] "n"(_SDT_ARGSZ(x)), [_SDT_A##n] _SDT_ARG_CONSTRAINT(_SDT_ARGVAL(x))
#endif

/* ---- compile-time checks that name the probe ---------------------------------------------- */

#define _SDT_XS(x) _SDT_STRINGIFY(x)
#if defined __cplusplus && __cplusplus >= 201103L
#define _SDT_CHECK_(ok, p, n, i, what) static_assert(ok, "sys/sdt.h: probe " _SDT_XS(p) ":" \
						  _SDT_XS(n) ": " what);
#elif !defined __cplusplus && defined __STDC_VERSION__ && __STDC_VERSION__ >= 201112L
#define _SDT_CHECK_(ok, p, n, i, what) _Static_assert(ok, "sys/sdt.h: probe " _SDT_XS(p) ":" \
						   _SDT_XS(n) ": " what);
#else
/* No static assertion in C89/C99/C++98: an array of negative size whose name says it all. */
#define _SDT_CHECK_(ok, p, n, i, what)                                                      \
	typedef char __sdt_probe_##p##__##n##__argument_##i##_not_a_scalar_of_at_most_8_bytes \
		[(ok) ? 1 : -1] __attribute__((__unused__));
#endif
#define _SDT_CHECK(i, x, p, n)                                                             \
	_SDT_CHECK_(_SDT_ARGOK(x), p, n, i, "argument " #i " is not a scalar of at most 8 bytes " \
		    "(struct, union, bit-field, _Complex, __int128 and long double are refused)")

#if defined __cplusplus && __cplusplus >= 201103L
#define _SDT_TOO_MANY(p, n) \
	do { static_assert(false, "sys/sdt.h: probe " #p ":" #n ": more than 12 arguments"); } \
	while (0)
#elif !defined __cplusplus && defined __STDC_VERSION__ && __STDC_VERSION__ >= 201112L
#define _SDT_TOO_MANY(p, n) \
	do { _Static_assert(0, "sys/sdt.h: probe " #p ":" #n ": more than 12 arguments"); } \
	while (0)
#else
#define _SDT_TOO_MANY(p, n)                                                                 \
	do {                                                                                \
		typedef char __sdt_probe_##p##__##n##__has_more_than_12_arguments[-1];      \
	} while (0)
#endif

/* ---- the probe statement ------------------------------------------------------------------ */

#if defined _SDT_HAS_SEMAPHORES
#define _SDT_NOTE_SEMAPHORE_USE(provider, name) \
	__asm__ __volatile__("" ::"m"(provider##_##name##_semaphore));
#else
#define _SDT_NOTE_SEMAPHORE_USE(provider, name)
#endif

#define _SDT_ASM_ARGS(n) _SDT_ASM_TEMPLATE_##n
#define _SDT_ASM_BODY(provider, name, pack_args, args) \
	_SDT_ASM_BODY_(provider, name, pack_args, args)

/* Checks, temporaries, then one asm statement: nop + note + base. arglist is SystemTap's
 * "(a1, ..., an)"; the helpers below want "(provider, name, a1, ..., an)". */
#define _SDT_PROBE(provider, name, n, arglist) \
	_SDT_PROBE_PN(provider, name, n, (provider, name _SDT_COMMAS_##n arglist))
#define _SDT_PROBE_PN(provider, name, n, pnargs)                                            \
	do {                                                                                \
		_SDT_DECLS_##n pnargs                                                       \
		_SDT_QUIET_BEGIN                                                            \
		_SDT_PROBE_ASM_(provider, name, n, pnargs)                                  \
		_SDT_QUIET_END                                                              \
	} while (0)
/* The asm text is longer than the 509 characters C90 promises; clang says so under -pedantic. */
#if defined __clang__ && !defined __cplusplus && \
	(!defined __STDC_VERSION__ || __STDC_VERSION__ < 199901L)
#define _SDT_QUIET_BEGIN                                                                    \
	_Pragma("clang diagnostic push")                                                    \
	_Pragma("clang diagnostic ignored \"-Woverlength-strings\"")
#define _SDT_QUIET_END _Pragma("clang diagnostic pop")
#else
#define _SDT_QUIET_BEGIN
#define _SDT_QUIET_END
#endif
#define _SDT_COMMAS_0()
#define _SDT_COMMAS_1(a) , a
#define _SDT_COMMAS_2(a, b) , a, b
#define _SDT_COMMAS_3(a, b, c) , a, b, c
#define _SDT_COMMAS_4(a, b, c, d) , a, b, c, d
#define _SDT_COMMAS_5(a, b, c, d, e) , a, b, c, d, e
#define _SDT_COMMAS_6(a, b, c, d, e, f) , a, b, c, d, e, f
#define _SDT_COMMAS_7(a, b, c, d, e, f, g) , a, b, c, d, e, f, g
#define _SDT_COMMAS_8(a, b, c, d, e, f, g, h) , a, b, c, d, e, f, g, h
#define _SDT_COMMAS_9(a, b, c, d, e, f, g, h, i) , a, b, c, d, e, f, g, h, i
#define _SDT_COMMAS_10(a, b, c, d, e, f, g, h, i, j) , a, b, c, d, e, f, g, h, i, j
#define _SDT_COMMAS_11(a, b, c, d, e, f, g, h, i, j, k) , a, b, c, d, e, f, g, h, i, j, k
#define _SDT_COMMAS_12(a, b, c, d, e, f, g, h, i, j, k, l) , a, b, c, d, e, f, g, h, i, j, k, l
#define _SDT_PROBE_ASM_(provider, name, n, arglist)                                         \
	_SDT_NOTE_SEMAPHORE_USE(provider, name)                                             \
	__asm__ __volatile__(_SDT_DEF_MACROS                                                \
			     _SDT_ASM_BODY_(provider, name, _SDT_PROBE_TEMPLATE_, (n))      \
			     _SDT_UNDEF_MACROS _SDT_ASM_BASE _SDT_WEIGHT_##n                \
			     :: _SDT_OPERANDS_##n arglist);

/* GCC sizes an asm statement by its lines (newlines and ';') when it decides what to inline,
 * clone or split. SystemTap's header writes its notes with assembler macros expanded in place,
 * which weigh 27 lines more than ours for a probe without arguments and 3 more per argument
 * (in C, 5 for the first). A function holding a probe must weigh what it weighs with SystemTap's
 * header, or GCC inlines it where SystemTap's build did not and a real project gets more sites
 * than with SystemTap's tools (GLib's quark__new: 3 instead of 1). The padding is empty lines,
 * which the assembler ignores; it emits no byte. Clang's inliner does not count asm lines, and
 * on i386 our asm is already heavier (the _SDT_OPND macro). tests/sdt/t-inline-weight checks it. */
#if defined __GNUC__ && !defined __clang__ && !defined _SDT_ARG_IN_MEMORY
#define _SDT_LINES_1 "\n"
#define _SDT_LINES_3 "\n\n\n"
#define _SDT_LINES_9 _SDT_LINES_3 _SDT_LINES_3 _SDT_LINES_3
#define _SDT_LINES_27 _SDT_LINES_9 _SDT_LINES_9 _SDT_LINES_9
#define _SDT_WEIGHT_0 _SDT_LINES_27
#ifdef __cplusplus
#define _SDT_WEIGHT_1 _SDT_WEIGHT_0 _SDT_LINES_3
#else
#define _SDT_WEIGHT_1 _SDT_WEIGHT_0 _SDT_LINES_3 _SDT_LINES_1 _SDT_LINES_1
#endif
#else
#define _SDT_LINES_3
#define _SDT_WEIGHT_0
#define _SDT_WEIGHT_1
#endif
#define _SDT_WEIGHT_2 _SDT_WEIGHT_1 _SDT_LINES_3
#define _SDT_WEIGHT_3 _SDT_WEIGHT_2 _SDT_LINES_3
#define _SDT_WEIGHT_4 _SDT_WEIGHT_3 _SDT_LINES_3
#define _SDT_WEIGHT_5 _SDT_WEIGHT_4 _SDT_LINES_3
#define _SDT_WEIGHT_6 _SDT_WEIGHT_5 _SDT_LINES_3
#define _SDT_WEIGHT_7 _SDT_WEIGHT_6 _SDT_LINES_3
#define _SDT_WEIGHT_8 _SDT_WEIGHT_7 _SDT_LINES_3
#define _SDT_WEIGHT_9 _SDT_WEIGHT_8 _SDT_LINES_3
#define _SDT_WEIGHT_10 _SDT_WEIGHT_9 _SDT_LINES_3
#define _SDT_WEIGHT_11 _SDT_WEIGHT_10 _SDT_LINES_3
#define _SDT_WEIGHT_12 _SDT_WEIGHT_11 _SDT_LINES_3
#define _SDT_PROBE_TEMPLATE_(n) _SDT_PROBE_TEMPLATE_##n

#define _SDT_D(i, x, p, n) _SDT_CHECK(i, x, p, n) _SDT_TMP(i, x)
/* The declarations need the provider and name too: arglist is (p, n, a1, ...) below. */
#define _SDT_DECLS_0(p, n)
#define _SDT_DECLS_1(p, n, a1) _SDT_D(1, a1, p, n)
#define _SDT_DECLS_2(p, n, a1, a2) _SDT_DECLS_1(p, n, a1) _SDT_D(2, a2, p, n)
#define _SDT_DECLS_3(p, n, a1, a2, a3) _SDT_DECLS_2(p, n, a1, a2) _SDT_D(3, a3, p, n)
#define _SDT_DECLS_4(p, n, a1, a2, a3, a4) _SDT_DECLS_3(p, n, a1, a2, a3) _SDT_D(4, a4, p, n)
#define _SDT_DECLS_5(p, n, a1, a2, a3, a4, a5) \
	_SDT_DECLS_4(p, n, a1, a2, a3, a4) _SDT_D(5, a5, p, n)
#define _SDT_DECLS_6(p, n, a1, a2, a3, a4, a5, a6) \
	_SDT_DECLS_5(p, n, a1, a2, a3, a4, a5) _SDT_D(6, a6, p, n)
#define _SDT_DECLS_7(p, n, a1, a2, a3, a4, a5, a6, a7) \
	_SDT_DECLS_6(p, n, a1, a2, a3, a4, a5, a6) _SDT_D(7, a7, p, n)
#define _SDT_DECLS_8(p, n, a1, a2, a3, a4, a5, a6, a7, a8) \
	_SDT_DECLS_7(p, n, a1, a2, a3, a4, a5, a6, a7) _SDT_D(8, a8, p, n)
#define _SDT_DECLS_9(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9) \
	_SDT_DECLS_8(p, n, a1, a2, a3, a4, a5, a6, a7, a8) _SDT_D(9, a9, p, n)
#define _SDT_DECLS_10(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) \
	_SDT_DECLS_9(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9) _SDT_D(10, a10, p, n)
#define _SDT_DECLS_11(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) \
	_SDT_DECLS_10(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) _SDT_D(11, a11, p, n)
#define _SDT_DECLS_12(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12)             \
	_SDT_DECLS_11(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11)                  \
	_SDT_D(12, a12, p, n)

/* The operand lists. A probe without arguments still needs one operand so that its asm is an
 * extended asm (where "%" must be written "%%"), like every other probe. */
#define _SDT_OPERANDS_0(p, n) [__sdt_dummy] "g"(0)
#define _SDT_OPERANDS_1(p, n, a1) _SDT_OPERAND(1, a1)
#define _SDT_OPERANDS_2(p, n, a1, a2) _SDT_OPERANDS_1(p, n, a1), _SDT_OPERAND(2, a2)
#define _SDT_OPERANDS_3(p, n, a1, a2, a3) _SDT_OPERANDS_2(p, n, a1, a2), _SDT_OPERAND(3, a3)
#define _SDT_OPERANDS_4(p, n, a1, a2, a3, a4) \
	_SDT_OPERANDS_3(p, n, a1, a2, a3), _SDT_OPERAND(4, a4)
#define _SDT_OPERANDS_5(p, n, a1, a2, a3, a4, a5) \
	_SDT_OPERANDS_4(p, n, a1, a2, a3, a4), _SDT_OPERAND(5, a5)
#define _SDT_OPERANDS_6(p, n, a1, a2, a3, a4, a5, a6) \
	_SDT_OPERANDS_5(p, n, a1, a2, a3, a4, a5), _SDT_OPERAND(6, a6)
#define _SDT_OPERANDS_7(p, n, a1, a2, a3, a4, a5, a6, a7) \
	_SDT_OPERANDS_6(p, n, a1, a2, a3, a4, a5, a6), _SDT_OPERAND(7, a7)
#define _SDT_OPERANDS_8(p, n, a1, a2, a3, a4, a5, a6, a7, a8) \
	_SDT_OPERANDS_7(p, n, a1, a2, a3, a4, a5, a6, a7), _SDT_OPERAND(8, a8)
#define _SDT_OPERANDS_9(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9) \
	_SDT_OPERANDS_8(p, n, a1, a2, a3, a4, a5, a6, a7, a8), _SDT_OPERAND(9, a9)
#define _SDT_OPERANDS_10(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) \
	_SDT_OPERANDS_9(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9), _SDT_OPERAND(10, a10)
#define _SDT_OPERANDS_11(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) \
	_SDT_OPERANDS_10(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10), _SDT_OPERAND(11, a11)
#define _SDT_OPERANDS_12(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12)           \
	_SDT_OPERANDS_11(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11),               \
		_SDT_OPERAND(12, a12)

/* Argument strings of STAP_PROBEn (through _SDT_ARGFMT) ... */
#define _SDT_PROBE_TEMPLATE_0
#define _SDT_PROBE_TEMPLATE_1 _SDT_ARGFMT(1)
#define _SDT_PROBE_TEMPLATE_2 _SDT_PROBE_TEMPLATE_1 _SDT_ASM_BLANK _SDT_ARGFMT(2)
#define _SDT_PROBE_TEMPLATE_3 _SDT_PROBE_TEMPLATE_2 _SDT_ASM_BLANK _SDT_ARGFMT(3)
#define _SDT_PROBE_TEMPLATE_4 _SDT_PROBE_TEMPLATE_3 _SDT_ASM_BLANK _SDT_ARGFMT(4)
#define _SDT_PROBE_TEMPLATE_5 _SDT_PROBE_TEMPLATE_4 _SDT_ASM_BLANK _SDT_ARGFMT(5)
#define _SDT_PROBE_TEMPLATE_6 _SDT_PROBE_TEMPLATE_5 _SDT_ASM_BLANK _SDT_ARGFMT(6)
#define _SDT_PROBE_TEMPLATE_7 _SDT_PROBE_TEMPLATE_6 _SDT_ASM_BLANK _SDT_ARGFMT(7)
#define _SDT_PROBE_TEMPLATE_8 _SDT_PROBE_TEMPLATE_7 _SDT_ASM_BLANK _SDT_ARGFMT(8)
#define _SDT_PROBE_TEMPLATE_9 _SDT_PROBE_TEMPLATE_8 _SDT_ASM_BLANK _SDT_ARGFMT(9)
#define _SDT_PROBE_TEMPLATE_10 _SDT_PROBE_TEMPLATE_9 _SDT_ASM_BLANK _SDT_ARGFMT(10)
#define _SDT_PROBE_TEMPLATE_11 _SDT_PROBE_TEMPLATE_10 _SDT_ASM_BLANK _SDT_ARGFMT(11)
#define _SDT_PROBE_TEMPLATE_12 _SDT_PROBE_TEMPLATE_11 _SDT_ASM_BLANK _SDT_ARGFMT(12)

/* ... and of STAP_PROBE_ASM_TEMPLATE, paired with STAP_PROBE_ASM_OPERANDS (_SDT_ARG). */
#define _SDT_ASM_TEMPLATE_0 /* no arguments */
#define _SDT_ASM_TEMPLATE_1 _SDT_ARGFMT_DIRECT(1)
#define _SDT_ASM_TEMPLATE_2 _SDT_ASM_TEMPLATE_1 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(2)
#define _SDT_ASM_TEMPLATE_3 _SDT_ASM_TEMPLATE_2 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(3)
#define _SDT_ASM_TEMPLATE_4 _SDT_ASM_TEMPLATE_3 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(4)
#define _SDT_ASM_TEMPLATE_5 _SDT_ASM_TEMPLATE_4 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(5)
#define _SDT_ASM_TEMPLATE_6 _SDT_ASM_TEMPLATE_5 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(6)
#define _SDT_ASM_TEMPLATE_7 _SDT_ASM_TEMPLATE_6 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(7)
#define _SDT_ASM_TEMPLATE_8 _SDT_ASM_TEMPLATE_7 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(8)
#define _SDT_ASM_TEMPLATE_9 _SDT_ASM_TEMPLATE_8 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(9)
#define _SDT_ASM_TEMPLATE_10 _SDT_ASM_TEMPLATE_9 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(10)
#define _SDT_ASM_TEMPLATE_11 _SDT_ASM_TEMPLATE_10 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(11)
#define _SDT_ASM_TEMPLATE_12 _SDT_ASM_TEMPLATE_11 _SDT_ASM_BLANK _SDT_ARGFMT_DIRECT(12)
#define _SDT_ASM_OPERANDS_0() [__sdt_dummy] "g"(0)
#define _SDT_ASM_OPERANDS_1(a1) _SDT_ARG(1, a1)
#define _SDT_ASM_OPERANDS_2(a1, a2) _SDT_ASM_OPERANDS_1(a1), _SDT_ARG(2, a2)
#define _SDT_ASM_OPERANDS_3(a1, a2, a3) _SDT_ASM_OPERANDS_2(a1, a2), _SDT_ARG(3, a3)
#define _SDT_ASM_OPERANDS_4(a1, a2, a3, a4) _SDT_ASM_OPERANDS_3(a1, a2, a3), _SDT_ARG(4, a4)
#define _SDT_ASM_OPERANDS_5(a1, a2, a3, a4, a5) \
	_SDT_ASM_OPERANDS_4(a1, a2, a3, a4), _SDT_ARG(5, a5)
#define _SDT_ASM_OPERANDS_6(a1, a2, a3, a4, a5, a6) \
	_SDT_ASM_OPERANDS_5(a1, a2, a3, a4, a5), _SDT_ARG(6, a6)
#define _SDT_ASM_OPERANDS_7(a1, a2, a3, a4, a5, a6, a7) \
	_SDT_ASM_OPERANDS_6(a1, a2, a3, a4, a5, a6), _SDT_ARG(7, a7)
#define _SDT_ASM_OPERANDS_8(a1, a2, a3, a4, a5, a6, a7, a8) \
	_SDT_ASM_OPERANDS_7(a1, a2, a3, a4, a5, a6, a7), _SDT_ARG(8, a8)
#define _SDT_ASM_OPERANDS_9(a1, a2, a3, a4, a5, a6, a7, a8, a9) \
	_SDT_ASM_OPERANDS_8(a1, a2, a3, a4, a5, a6, a7, a8), _SDT_ARG(9, a9)
#define _SDT_ASM_OPERANDS_10(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) \
	_SDT_ASM_OPERANDS_9(a1, a2, a3, a4, a5, a6, a7, a8, a9), _SDT_ARG(10, a10)
#define _SDT_ASM_OPERANDS_11(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) \
	_SDT_ASM_OPERANDS_10(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10), _SDT_ARG(11, a11)
#define _SDT_ASM_OPERANDS_12(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) \
	_SDT_ASM_OPERANDS_11(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11), _SDT_ARG(12, a12)

#endif /* C and C++ */

/* ---- public macros ------------------------------------------------------------------------ */

#define STAP_PROBE(provider, name) _SDT_PROBE(provider, name, 0, ())
#define STAP_PROBE1(provider, name, a1) _SDT_PROBE(provider, name, 1, (a1))
#define STAP_PROBE2(provider, name, a1, a2) \
	_SDT_PROBE(provider, name, 2, (a1, a2))
#define STAP_PROBE3(provider, name, a1, a2, a3) \
	_SDT_PROBE(provider, name, 3, (a1, a2, a3))
#define STAP_PROBE4(provider, name, a1, a2, a3, a4) \
	_SDT_PROBE(provider, name, 4, (a1, a2, a3, a4))
#define STAP_PROBE5(provider, name, a1, a2, a3, a4, a5) \
	_SDT_PROBE(provider, name, 5, (a1, a2, a3, a4, a5))
#define STAP_PROBE6(provider, name, a1, a2, a3, a4, a5, a6) \
	_SDT_PROBE(provider, name, 6, (a1, a2, a3, a4, a5, a6))
#define STAP_PROBE7(provider, name, a1, a2, a3, a4, a5, a6, a7) \
	_SDT_PROBE(provider, name, 7, (a1, a2, a3, a4, a5, a6, a7))
#define STAP_PROBE8(provider, name, a1, a2, a3, a4, a5, a6, a7, a8) \
	_SDT_PROBE(provider, name, 8, (a1, a2, a3, a4, a5, a6, a7, a8))
#define STAP_PROBE9(provider, name, a1, a2, a3, a4, a5, a6, a7, a8, a9) \
	_SDT_PROBE(provider, name, 9, (a1, a2, a3, a4, a5, a6, a7, a8, a9))
#define STAP_PROBE10(provider, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) \
	_SDT_PROBE(provider, name, 10, (a1, a2, a3, a4, a5, a6, a7, a8, a9, a10))
#define STAP_PROBE11(provider, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11)          \
	_SDT_PROBE(provider, name, 11,                                                      \
		   (a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11))
#define STAP_PROBE12(provider, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12)     \
	_SDT_PROBE(provider, name, 12,                                                      \
		   (a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12))
#ifndef __ASSEMBLER__
/* SystemTap stops at 12; say so by name rather than with an implicit-declaration error. */
#define STAP_PROBE13(provider, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13) \
	_SDT_TOO_MANY(provider, name)
#endif

#define DTRACE_PROBE(provider, probe) STAP_PROBE(provider, probe)
#define DTRACE_PROBE1(provider, probe, a1) STAP_PROBE1(provider, probe, a1)
#define DTRACE_PROBE2(provider, probe, a1, a2) STAP_PROBE2(provider, probe, a1, a2)
#define DTRACE_PROBE3(provider, probe, a1, a2, a3) STAP_PROBE3(provider, probe, a1, a2, a3)
#define DTRACE_PROBE4(provider, probe, a1, a2, a3, a4) \
	STAP_PROBE4(provider, probe, a1, a2, a3, a4)
#define DTRACE_PROBE5(provider, probe, a1, a2, a3, a4, a5) \
	STAP_PROBE5(provider, probe, a1, a2, a3, a4, a5)
#define DTRACE_PROBE6(provider, probe, a1, a2, a3, a4, a5, a6) \
	STAP_PROBE6(provider, probe, a1, a2, a3, a4, a5, a6)
#define DTRACE_PROBE7(provider, probe, a1, a2, a3, a4, a5, a6, a7) \
	STAP_PROBE7(provider, probe, a1, a2, a3, a4, a5, a6, a7)
#define DTRACE_PROBE8(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8) \
	STAP_PROBE8(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8)
#define DTRACE_PROBE9(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8, a9) \
	STAP_PROBE9(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8, a9)
#define DTRACE_PROBE10(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) \
	STAP_PROBE10(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10)
#define DTRACE_PROBE11(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) \
	STAP_PROBE11(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11)
#define DTRACE_PROBE12(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) \
	STAP_PROBE12(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12)
#ifndef __ASSEMBLER__
#define DTRACE_PROBE13(provider, probe, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13) \
	_SDT_TOO_MANY(provider, probe)
#endif

/* STAP_PROBE_ASM without variadic macros (C89, C++98): one argument-string operand. */
#if !defined __ASSEMBLER__
#define STAP_PROBE_ASM_TEMPLATE(n) _SDT_ASM_TEMPLATE_##n, "use _SDT_ASM_TEMPLATE_"
#endif

/*
 * The variadic macros. Only defined where the language has variadic macros (C99, C++11) or
 * the user asks for STAP_PROBEV with SDT_USE_VARIADIC (an extension before C99 and C++11,
 * which -Wpedantic accepts here because this is a system header).
 */
#if defined SDT_USE_VARIADIC ||                                                           \
	(defined __STDC_VERSION__ && __STDC_VERSION__ >= 199901L) ||                        \
	(defined __cplusplus && __cplusplus >= 201103L)
#define _SDT_HAVE_VARIADIC 1
#endif

#if defined _SDT_HAVE_VARIADIC && !defined __ASSEMBLER__
/* SystemTap's counter, kept for code that uses it: called with an extra leading 0. */
#define _SDT_NARG(...) __SDT_NARG(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define __SDT_NARG(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N

/* STAP_PROBEV(provider, name, args...): count everything after provider and name without
 * GNU's ", ##__VA_ARGS__", so that zero arguments are fine under -pedantic too. */
#define _SDT_VPICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16,    \
		   _17, _18, _19, _20, N, ...)                                                \
	N
#define _SDT_VNARG(...)                                                                     \
	_SDT_VPICK(__VA_ARGS__, X, X, X, X, X, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, \
		   X, X)
#define _SDT_PROBEV_(N, ...) _SDT_PROBEV__(N, __VA_ARGS__)
#define _SDT_PROBEV__(N, ...) _SDT_PROBEV_##N(__VA_ARGS__)
#define _SDT_PROBEV_0(p, n) STAP_PROBE(p, n)
#define _SDT_PROBEV_1(p, n, ...) STAP_PROBE1(p, n, __VA_ARGS__)
#define _SDT_PROBEV_2(p, n, ...) STAP_PROBE2(p, n, __VA_ARGS__)
#define _SDT_PROBEV_3(p, n, ...) STAP_PROBE3(p, n, __VA_ARGS__)
#define _SDT_PROBEV_4(p, n, ...) STAP_PROBE4(p, n, __VA_ARGS__)
#define _SDT_PROBEV_5(p, n, ...) STAP_PROBE5(p, n, __VA_ARGS__)
#define _SDT_PROBEV_6(p, n, ...) STAP_PROBE6(p, n, __VA_ARGS__)
#define _SDT_PROBEV_7(p, n, ...) STAP_PROBE7(p, n, __VA_ARGS__)
#define _SDT_PROBEV_8(p, n, ...) STAP_PROBE8(p, n, __VA_ARGS__)
#define _SDT_PROBEV_9(p, n, ...) STAP_PROBE9(p, n, __VA_ARGS__)
#define _SDT_PROBEV_10(p, n, ...) STAP_PROBE10(p, n, __VA_ARGS__)
#define _SDT_PROBEV_11(p, n, ...) STAP_PROBE11(p, n, __VA_ARGS__)
#define _SDT_PROBEV_12(p, n, ...) STAP_PROBE12(p, n, __VA_ARGS__)
#define _SDT_PROBEV_13(p, n, ...) _SDT_TOO_MANY(p, n)
#define _SDT_PROBEV_X(p, n, ...) _SDT_TOO_MANY(p, n)
#ifdef SDT_USE_VARIADIC
#define STAP_PROBEV(...) _SDT_PROBEV_(_SDT_VNARG(__VA_ARGS__), __VA_ARGS__)
#define _SDT_PROBE_N(provider, name, N, ...) _SDT_PROBE(provider, name, N, (__VA_ARGS__))
#endif

#endif /* variadic */

#if !defined __ASSEMBLER__ && ((defined __STDC_VERSION__ && __STDC_VERSION__ >= 199901L) || \
			      (defined __cplusplus && __cplusplus >= 201103L))
/* Probes inside the user's own asm statement:
 *   asm ("insn\n" STAP_PROBE_ASM(p, n, %eax 4(%esi)) "insn\n");                  (basic asm)
 *   asm (STAP_PROBE_ASM(p, n, STAP_PROBE_ASM_TEMPLATE(2)) :: STAP_PROBE_ASM_OPERANDS(2, x, y));
 * One variadic argument is literal operand text; two (from STAP_PROBE_ASM_TEMPLATE) are the
 * template and a marker that selects it. */
#define _SDT_ASM_BODY_1(p, n, ...) _SDT_ASM_BODY_(p, n, _SDT_ASM_SUBSTR, (__VA_ARGS__))
#define _SDT_ASM_BODY_2(p, n, tmpl, marker) _SDT_ASM_BODY_(p, n, _SDT_ASM_IDENT, (tmpl))
#define _SDT_ASM_IDENT(x) x
#define _SDT_ASM_BODY_N2(p, n, no, ...) _SDT_ASM_BODY_##no(p, n, __VA_ARGS__)
#define _SDT_ASM_BODY_N1(p, n, no, ...) _SDT_ASM_BODY_N2(p, n, no, __VA_ARGS__)
#define _SDT_ASM_BODY_N(p, n, ...) _SDT_ASM_BODY_N1(p, n, _SDT_NARG(0, __VA_ARGS__), __VA_ARGS__)
#define STAP_PROBE_ASM(provider, name, ...) _SDT_ASM_BODY_N(provider, name, __VA_ARGS__) \
	_SDT_ASM_BASE
#define STAP_PROBE_ASM_OPERANDS(n, ...) _SDT_ASM_OPERANDS_##n(__VA_ARGS__)
#elif !defined __ASSEMBLER__
/* C89/C++98: the argument text as one macro argument (no commas). */
#define STAP_PROBE_ASM(provider, name, args)                                                \
	_SDT_ASM_BODY_(provider, name, _SDT_ASM_SUBSTR, (args)) _SDT_ASM_BASE
#endif

#endif /* _SYS_SDT_H */
