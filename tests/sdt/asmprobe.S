/* SPDX-License-Identifier: MIT */
/* Probes in an assembler file: the operands are literal argument specs. */
#include <sys/sdt.h>

	.text
	.globl	asm_probed
	.type	asm_probed, @function
asm_probed:
	STAP_PROBE(asmprov, zero)
	STAP_PROBE1(asmprov, one, -4@%edi)
	STAP_PROBE2(asmprov, entry, -8@%rdi, 8@8(%rsi))
	DTRACE_PROBE3(asmprov, three, 8@%rdi, -4@%esi, 2@$7)
	movq	%rdi, %rax
	ret
	.size	asm_probed, .-asm_probed
	.section .note.GNU-stack,"",@progbits
