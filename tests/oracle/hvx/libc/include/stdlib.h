/* Freestanding stdlib for the Hexagon oracle (written for Hexscope): a bump heap. */
#ifndef HX_STDLIB_H
#define HX_STDLIB_H 1
#include <stddef.h>
void *malloc(size_t n);
void *calloc(size_t n, size_t s);
void *realloc(void *p, size_t n);
void free(void *p);
int posix_memalign(void **p, size_t align, size_t n);
void *memalign(size_t align, size_t n);
void abort(void) __attribute__((noreturn));
void exit(int code) __attribute__((noreturn));
int abs(int x);
long labs(long x);
long long llabs(long long x);
int atoi(const char *s);
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
#endif
