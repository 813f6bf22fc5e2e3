/* Freestanding string.h for the Hexagon oracle (written for Hexscope). */
#ifndef HX_STRING_H
#define HX_STRING_H 1
#include <stddef.h>
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strncpy(char *d, const char *s, size_t n);
char *strcpy(char *d, const char *s);
char *strchr(const char *s, int c);
#endif
