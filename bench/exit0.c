/* SPDX-License-Identifier: MIT */
/* The smallest program: exit(0) from its entry, no libc. */
void _start(void);

void _start(void)
{
#if defined(__x86_64__)
	__asm__ volatile("mov $60, %eax\n\txor %edi, %edi\n\tsyscall");
#elif defined(__i386__)
	__asm__ volatile("mov $1, %eax\n\txor %ebx, %ebx\n\tint $0x80");
#elif defined(__aarch64__)
	__asm__ volatile("mov x8, #93\n\tmov x0, #0\n\tsvc #0");
#endif
	for (;;)
		;
}
