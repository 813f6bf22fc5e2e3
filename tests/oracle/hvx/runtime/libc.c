/* Freestanding C runtime for the Hexagon oracle under qemu-hexagon (written for Hexscope, not
 * from any libc): Linux syscalls through trap0, a bump heap that the driver resets after each
 * case, the string functions, and a small printf (for nnlib's log and error messages only).
 * Nothing here computes op semantics. */
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long hx_syscall3(long n, long a, long b, long c)
{
	register long r0 asm("r0") = a;
	register long r1 asm("r1") = b;
	register long r2 asm("r2") = c;
	register long r6 asm("r6") = n;
	asm volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
	return r0;
}
enum { SYS_read = 63, SYS_write = 64, SYS_exit_group = 94, SYS_exit = 93 };

long hx_read(int fd, void *buf, long n) { return hx_syscall3(SYS_read, fd, (long)buf, n); }
long hx_write(int fd, const void *buf, long n) { return hx_syscall3(SYS_write, fd, (long)buf, n); }
void exit(int code) { hx_syscall3(SYS_exit_group, code, 0, 0); for (;;) ; }
void abort(void) { hx_write(2, "hvx oracle: abort\n", 18); exit(134); }
void hx_assert_fail(const char *what, const char *file, int line)
{ fprintf(stderr, "hvx oracle: assert %s at %s:%d\n", what, file, line); exit(134); }

/* ---- heap: a bump allocator over a static arena; free is a no-op, hx_heap_release() drops
 * everything allocated since hx_heap_mark() (the driver brackets each case) ---- */
#define ARENA (768u << 20)
static uint8_t arena[ARENA] __attribute__((aligned(4096)));
static size_t heap_top, heap_mark_at;
void hx_heap_mark(void) { heap_mark_at = heap_top; }
void hx_heap_release(void) { heap_top = heap_mark_at; }
void *memalign(size_t align, size_t n)
{
	if (align < 16) align = 16;
	size_t p = (heap_top + 8 + align - 1) & ~(align - 1);   /* 8 bytes before: the size */
	if (p + n > ARENA) { hx_write(2, "hvx oracle: out of memory\n", 26); exit(137); }
	*(uint32_t *)(arena + p - 8) = (uint32_t)n;
	heap_top = p + n;
	return arena + p;
}
void *malloc(size_t n) { return memalign(16, n); }
void *calloc(size_t n, size_t s) { void *p = malloc(n * s); memset(p, 0, n * s); return p; }
void free(void *p) { (void)p; }
void *realloc(void *p, size_t n)
{
	void *q = malloc(n);
	if (p) { size_t old = *(uint32_t *)((uint8_t *)p - 8); memcpy(q, p, old < n ? old : n); }
	return q;
}
int posix_memalign(void **p, size_t align, size_t n) { *p = memalign(align, n); return 0; }

/* ---- strings ---- */
void *memcpy(void *d, const void *s, size_t n)
{
	uint8_t *dp = d; const uint8_t *sp = s;
	if ((((uintptr_t)dp | (uintptr_t)sp) & 7) == 0) {
		for (; n >= 8; n -= 8, dp += 8, sp += 8) *(uint64_t *)dp = *(const uint64_t *)sp;
	}
	while (n--) *dp++ = *sp++;
	return d;
}
void *memmove(void *d, const void *s, size_t n)
{
	uint8_t *dp = d; const uint8_t *sp = s;
	if (dp <= sp || dp >= sp + n) return memcpy(d, s, n);
	while (n--) dp[n] = sp[n];
	return d;
}
void *memset(void *d, int c, size_t n)
{
	uint8_t *dp = d;
	while (n && ((uintptr_t)dp & 7)) { *dp++ = (uint8_t)c; n--; }
	uint64_t v = (uint8_t)c * 0x0101010101010101ull;
	for (; n >= 8; n -= 8, dp += 8) *(uint64_t *)dp = v;
	while (n--) *dp++ = (uint8_t)c;
	return d;
}
int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	for (size_t i = 0; i < n; i++) if (x[i] != y[i]) return x[i] - y[i];
	return 0;
}
size_t strlen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }
int strcmp(const char *a, const char *b) { while (*a && *a == *b) a++, b++; return (uint8_t)*a - (uint8_t)*b; }
int strncmp(const char *a, const char *b, size_t n)
{ for (; n; n--, a++, b++) { if (*a != *b || !*a) return (uint8_t)*a - (uint8_t)*b; } return 0; }
char *strncpy(char *d, const char *s, size_t n)
{ size_t i = 0; for (; i < n && s[i]; i++) d[i] = s[i]; for (; i < n; i++) d[i] = 0; return d; }
char *strcpy(char *d, const char *s) { char *r = d; while ((*d++ = *s++)) ; return r; }
char *strchr(const char *s, int c) { for (; *s; s++) if (*s == (char)c) return (char *)s; return c ? NULL : (char *)s; }
int abs(int x) { return x < 0 ? -x : x; }
long labs(long x) { return x < 0 ? -x : x; }
long long llabs(long long x) { return x < 0 ? -x : x; }
int atoi(const char *s) { int v = 0, neg = *s == '-'; if (neg || *s == '+') s++; while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0'); return neg ? -v : v; }
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{   /* insertion sort: nnlib sorts a handful of items */
	uint8_t *b = base, tmp[256];
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp(b + (j - 1) * size, b + j * size) > 0; j--) {
			memcpy(tmp, b + j * size, size); memcpy(b + j * size, b + (j - 1) * size, size);
			memcpy(b + (j - 1) * size, tmp, size);
		}
}

/* ---- printf: %d %i %u %x %X %o %c %s %p %f %e %g with l/ll/z/h, width, precision, '-', '0' ---- */
struct sink { char *s; size_t n, pos; };
static void put(struct sink *k, char c) { if (k->pos + 1 < k->n) k->s[k->pos] = c; k->pos++; }
static void puts_n(struct sink *k, const char *s, int len, int width, int left, char padc)
{
	int padn = width > len ? width - len : 0;
	if (!left) while (padn--) put(k, padc);
	for (int i = 0; i < len; i++) put(k, s[i]);
	if (left) while (padn-- > 0) put(k, ' ');
}
static int utoa(char *buf, unsigned long long v, int base, int upper)
{
	char t[32]; int n = 0;
	do { int d = v % base; t[n++] = d < 10 ? '0' + d : (upper ? 'A' : 'a') + d - 10; v /= base; } while (v);
	for (int i = 0; i < n; i++) buf[i] = t[n - 1 - i];
	return n;
}
static int ftoa(char *buf, double v, int prec)
{   /* fixed notation, enough for log messages */
	int n = 0;
	if (v != v) { memcpy(buf, "nan", 3); return 3; }
	if (v < 0) { buf[n++] = '-'; v = -v; }
	if (v > 1e18) { memcpy(buf + n, "inf", 3); return n + 3; }
	double r = 0.5; for (int i = 0; i < prec; i++) r /= 10;
	v += r;
	unsigned long long ip = (unsigned long long)v;
	n += utoa(buf + n, ip, 10, 0);
	if (prec) {
		buf[n++] = '.';
		double f = v - (double)ip;
		for (int i = 0; i < prec; i++) { f *= 10; int d = (int)f; buf[n++] = '0' + d; f -= d; }
	}
	return n;
}
int vsnprintf(char *s, size_t n, const char *fmt, va_list ap)
{
	struct sink k = { s, n, 0 };
	for (; *fmt; fmt++) {
		if (*fmt != '%') { put(&k, *fmt); continue; }
		fmt++;
		int left = 0, zero = 0, width = 0, prec = -1, lng = 0;
		for (;; fmt++) { if (*fmt == '-') left = 1; else if (*fmt == '0') zero = 1; else if (*fmt == '+' || *fmt == ' ' || *fmt == '#') ; else break; }
		if (*fmt == '*') { width = va_arg(ap, int); fmt++; } else while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
		if (*fmt == '.') { fmt++; prec = 0; if (*fmt == '*') { prec = va_arg(ap, int); fmt++; } else while (*fmt >= '0' && *fmt <= '9') prec = prec * 10 + (*fmt++ - '0'); }
		while (*fmt == 'l' || *fmt == 'h' || *fmt == 'z' || *fmt == 't' || *fmt == 'j' || *fmt == 'L') { if (*fmt == 'l') lng++; if (*fmt == 'j') lng = 2; fmt++; }
		char buf[64]; int len = 0;
		switch (*fmt) {
		case 'd': case 'i': {
			long long v = lng >= 2 ? va_arg(ap, long long) : lng ? va_arg(ap, long) : va_arg(ap, int);
			if (v < 0) { buf[len++] = '-'; len += utoa(buf + len, -(unsigned long long)v, 10, 0); }
			else len = utoa(buf, v, 10, 0);
			puts_n(&k, buf, len, width, left, zero ? '0' : ' '); break; }
		case 'u': case 'x': case 'X': case 'o': {
			unsigned long long v = lng >= 2 ? va_arg(ap, unsigned long long) : lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			len = utoa(buf, v, *fmt == 'u' ? 10 : *fmt == 'o' ? 8 : 16, *fmt == 'X');
			puts_n(&k, buf, len, width, left, zero ? '0' : ' '); break; }
		case 'p': buf[0] = '0'; buf[1] = 'x'; len = 2 + utoa(buf + 2, (uintptr_t)va_arg(ap, void *), 16, 0);
			puts_n(&k, buf, len, width, left, ' '); break;
		case 'c': buf[0] = (char)va_arg(ap, int); puts_n(&k, buf, 1, width, left, ' '); break;
		case 's': { const char *str = va_arg(ap, const char *); if (!str) str = "(null)";
			int sl = strlen(str); if (prec >= 0 && sl > prec) sl = prec;
			puts_n(&k, str, sl, width, left, ' '); break; }
		case 'f': case 'F': case 'e': case 'g': case 'G': case 'a':
			len = ftoa(buf, va_arg(ap, double), prec < 0 ? 6 : prec > 12 ? 12 : prec);
			puts_n(&k, buf, len, width, left, ' '); break;
		case '%': put(&k, '%'); break;
		case 0: fmt--; break;
		default: put(&k, '%'); put(&k, *fmt);
		}
	}
	if (n) s[k.pos < n ? k.pos : n - 1] = 0;
	return (int)k.pos;
}
int snprintf(char *s, size_t n, const char *fmt, ...) { va_list ap; va_start(ap, fmt); int r = vsnprintf(s, n, fmt, ap); va_end(ap); return r; }
int sprintf(char *s, const char *fmt, ...) { va_list ap; va_start(ap, fmt); int r = vsnprintf(s, 1 << 20, fmt, ap); va_end(ap); return r; }
struct hx_file { int fd; };
static struct hx_file f_out = { 1 }, f_err = { 2 };
FILE *stdout = &f_out, *stderr = &f_err;
int vfprintf(FILE *f, const char *fmt, va_list ap)
{
	char buf[1024]; int r = vsnprintf(buf, sizeof buf, fmt, ap);
	/* stdout carries the binary result stream: text goes to stderr */
	hx_write(2, buf, r < (int)sizeof buf ? r : (int)sizeof buf - 1);
	(void)f; return r;
}
int fprintf(FILE *f, const char *fmt, ...) { va_list ap; va_start(ap, fmt); int r = vfprintf(f, fmt, ap); va_end(ap); return r; }
int printf(const char *fmt, ...) { va_list ap; va_start(ap, fmt); int r = vfprintf(stderr, fmt, ap); va_end(ap); return r; }
int vprintf(const char *fmt, va_list ap) { return vfprintf(stderr, fmt, ap); }
int puts(const char *s) { hx_write(2, s, strlen(s)); hx_write(2, "\n", 1); return 0; }
int putchar(int c) { char ch = c; hx_write(2, &ch, 1); return c; }
int fflush(FILE *f) { (void)f; return 0; }

int main(void);
void _start(void) { exit(main()); }

/* driver/oracle.c's x86 float-conversion emulation (stubs/hexconv.c) has nothing to do here:
 * the conversions are the Hexagon instructions themselves */
void oracle_hexconv_begin(void) {}
void oracle_hexconv_end(void) {}
void (*oracle_hexconv_crash)(int sig);
