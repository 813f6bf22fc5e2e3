/* setjmp/longjmp for the Hexagon oracle (written for Hexscope): the callee-saved registers
 * r16..r27, the frame and stack pointers and the link register. */
	.text
	.globl setjmp
	.type setjmp, @function
	.p2align 4
setjmp:
	memd(r0+#0) = r17:16
	memd(r0+#8) = r19:18
	memd(r0+#16) = r21:20
	memd(r0+#24) = r23:22
	memd(r0+#32) = r25:24
	memd(r0+#40) = r27:26
	memd(r0+#48) = r29:28
	memd(r0+#56) = r31:30
	r0 = #0
	jumpr r31
	.size setjmp, .-setjmp

	.globl longjmp
	.type longjmp, @function
	.p2align 4
longjmp:
	r17:16 = memd(r0+#0)
	r19:18 = memd(r0+#8)
	r21:20 = memd(r0+#16)
	r23:22 = memd(r0+#24)
	r25:24 = memd(r0+#32)
	r27:26 = memd(r0+#40)
	r29:28 = memd(r0+#48)
	r31:30 = memd(r0+#56)
	p0 = cmp.eq(r1, #0)
	r0 = r1
	if (p0) r0 = #1
	jumpr r31
	.size longjmp, .-longjmp
