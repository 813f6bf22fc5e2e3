/* Freestanding stdio for the Hexagon oracle (written for Hexscope): formatting only. */
#ifndef HX_STDIO_H
#define HX_STDIO_H 1
#include <stddef.h>
#include <stdarg.h>
typedef struct hx_file FILE;
extern FILE *stdout, *stderr;
int printf(const char *fmt, ...);
int fprintf(FILE *f, const char *fmt, ...);
int sprintf(char *s, const char *fmt, ...);
int snprintf(char *s, size_t n, const char *fmt, ...);
int vsnprintf(char *s, size_t n, const char *fmt, va_list ap);
int vfprintf(FILE *f, const char *fmt, va_list ap);
int vprintf(const char *fmt, va_list ap);
int puts(const char *s);
int putchar(int c);
int fflush(FILE *f);
#endif
