#ifndef HX_ASSERT_H
#define HX_ASSERT_H 1
void hx_assert_fail(const char *what, const char *file, int line) __attribute__((noreturn));
#define assert(x) ((x) ? (void)0 : hx_assert_fail(#x, __FILE__, __LINE__))
#endif
