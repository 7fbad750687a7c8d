/* SPDX-License-Identifier: MIT */
/*
 * usdtkit_probe_fire() on aarch64: as fire-x86_64.S. Loads the semaphore
 * pointer (the probe's first member) and the semaphore; zero returns 0,
 * anything else branches, every argument register untouched, to the C
 * function that reads the arguments (usdt_rt_fire_slow in provider.c).
 */
	.text
	.globl	usdtkit_probe_fire
	.type	usdtkit_probe_fire, %function
	.p2align 4
usdtkit_probe_fire:
	.cfi_startproc
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
	bti	c
#endif
	ldr	x9, [x0]
	ldrh	w9, [x9]
	cbnz	w9, usdt_rt_fire_slow
	mov	w0, #0
	ret
	.cfi_endproc
	.size	usdtkit_probe_fire, .-usdtkit_probe_fire

	.section .note.GNU-stack,"",%progbits
