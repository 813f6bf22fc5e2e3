/* Freestanding setjmp for the Hexagon oracle (written for Hexscope; runtime/setjmp.S). */
#ifndef HX_SETJMP_H
#define HX_SETJMP_H 1
typedef long long jmp_buf[8];
typedef long long sigjmp_buf[8];
int setjmp(jmp_buf b) __attribute__((returns_twice));
void longjmp(jmp_buf b, int v) __attribute__((noreturn));
#define sigsetjmp(b, s) setjmp(b)
#define siglongjmp(b, v) longjmp(b, v)
#endif
