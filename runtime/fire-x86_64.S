/* SPDX-License-Identifier: MIT */
/*
 * usdtkit_probe_fire() on x86-64: the disabled path without the variadic
 * prologue a C compiler gives every variadic function (six register spills
 * and a stack frame before the first test). Loads the probe's semaphore
 * pointer (struct usdtkit_probe's first member) and the semaphore; zero
 * returns 0. Otherwise it jumps, with every argument register and %al as the
 * caller left them, to the C function that reads the arguments
 * (usdt_rt_fire_slow in provider.c), whose return is the caller's.
 */
	.text
	.globl	usdtkit_probe_fire
	.type	usdtkit_probe_fire, @function
	.p2align 4
usdtkit_probe_fire:
	.cfi_startproc
#ifdef __CET__
	endbr64
#endif
	movq	(%rdi), %r10
	cmpw	$0, (%r10)
	jne	usdt_rt_fire_slow
	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	usdtkit_probe_fire, .-usdtkit_probe_fire

	.section .note.GNU-stack,"",@progbits
