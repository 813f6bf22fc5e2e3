/* Freestanding libm subset for the Hexagon oracle (written for Hexscope; the functions are in
 * tests/oracle/hvx/runtime/libm.c). The DSP's own libm is a third one: ops whose outputs go
 * through these are flagged in docs/oracle-hvx.md. */
#ifndef HX_MATH_H
#define HX_MATH_H 1
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define HUGE_VALF (__builtin_huge_valf())
#define HUGE_VAL (__builtin_huge_val())
#define M_PI 3.14159265358979323846
#define M_LN2 0.69314718055994530942
#define isnan(x) __builtin_isnan(x)
#define isinf(x) __builtin_isinf(x)
#define isfinite(x) __builtin_isfinite(x)
#define signbit(x) __builtin_signbit(x)
#define fpclassify(x) __builtin_fpclassify(0, 1, 4, 3, 2, x)
#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
float fabsf(float); double fabs(double);
float floorf(float); double floor(double);
float ceilf(float); double ceil(double);
float roundf(float); double round(double);
float truncf(float); double trunc(double);
float nearbyintf(float); float rintf(float); double rint(double); double nearbyint(double);
long lrintf(float); long lroundf(float);
float fmaxf(float, float); float fminf(float, float);
double fmax(double, double); double fmin(double, double);
float sqrtf(float); double sqrt(double);
float expf(float); double exp(double);
float exp2f(float); float logf(float); double log(double);
float log2f(float); double log2(double); float log10f(float);
float powf(float, float); double pow(double, double);
float frexpf(float, int *); double frexp(double, int *);
float ldexpf(float, int); double ldexp(double, int);
float scalbnf(float, int);
float fmaf(float, float, float); double fma(double, double, double);
float tanhf(float); float copysignf(float, float);
float fmodf(float, float);
#endif
