/* The libm functions that the Hexagon oracle's nnlib files call (written for Hexscope, not
 * from any libm). Rounding functions are exact; expf/expm1f are computed in double and rounded
 * once (correctly rounded except in rare near-ties). The DSP's own libm is another one: an op
 * whose output goes through these is flagged in docs/oracle-hvx.md. */
#include <math.h>
#include <stdint.h>

static inline uint32_t fb(float x) { union { float f; uint32_t u; } v = { x }; return v.u; }
static inline float bf(uint32_t u) { union { uint32_t u; float f; } v = { u }; return v.f; }
static inline uint64_t db(double x) { union { double d; uint64_t u; } v = { x }; return v.u; }
static inline double bd(uint64_t u) { union { uint64_t u; double d; } v = { u }; return v.d; }

float fabsf(float x) { return bf(fb(x) & 0x7fffffffu); }
double fabs(double x) { return bd(db(x) & ~(1ull << 63)); }
float copysignf(float x, float y) { return bf((fb(x) & 0x7fffffffu) | (fb(y) & 0x80000000u)); }
float truncf(float x)
{
	uint32_t u = fb(x); int e = ((u >> 23) & 0xff) - 127;
	if (e >= 23) return x;
	if (e < 0) return bf(u & 0x80000000u);
	return bf(u & ~((1u << (23 - e)) - 1));
}
float floorf(float x)
{
	float t = truncf(x);
	return (x < 0 && t != x) ? t - 1.0f : t;
}
float ceilf(float x)
{
	float t = truncf(x);
	return (x > 0 && t != x) ? t + 1.0f : t;
}
float roundf(float x)          /* half away from zero */
{
	float t = truncf(x), d = fabsf(x - t);
	if (d >= 0.5f) t += x < 0 ? -1.0f : 1.0f;
	return isnan(x) ? x : t;
}
float rintf(float x)           /* half to even (the default rounding mode) */
{
	uint32_t u = fb(x); int e = ((u >> 23) & 0xff) - 127;
	if (e >= 23) return x;
	float big = bf((u & 0x80000000u) | 0x4b000000u);   /* +-2^23 */
	float r = (x + big) - big;
	return copysignf(r, x);
}
float nearbyintf(float x) { return rintf(x); }
long lrintf(float x) { return (long)rintf(x); }
long lroundf(float x) { return (long)roundf(x); }
float fmaxf(float a, float b) { if (isnan(a)) return b; if (isnan(b)) return a; return a > b ? a : b; }
float fminf(float a, float b) { if (isnan(a)) return b; if (isnan(b)) return a; return a < b ? a : b; }
double fmax(double a, double b) { if (isnan(a)) return b; if (isnan(b)) return a; return a > b ? a : b; }
double fmin(double a, double b) { if (isnan(a)) return b; if (isnan(b)) return a; return a < b ? a : b; }
double trunc(double x)
{
	uint64_t u = db(x); int e = (int)((u >> 52) & 0x7ff) - 1023;
	if (e >= 52) return x;
	if (e < 0) return bd(u & (1ull << 63));
	return bd(u & ~((1ull << (52 - e)) - 1));
}
double floor(double x) { double t = trunc(x); return (x < 0 && t != x) ? t - 1.0 : t; }
double ceil(double x) { double t = trunc(x); return (x > 0 && t != x) ? t + 1.0 : t; }
double round(double x) { double t = trunc(x); if (fabs(x - t) >= 0.5) t += x < 0 ? -1.0 : 1.0; return t; }
float ldexpf(float x, int n)
{
	double d = x;
	while (n > 0) { int k = n > 500 ? 500 : n; d *= bd((uint64_t)(1023 + k) << 52); n -= k; }
	while (n < 0) { int k = n < -500 ? -500 : n; d *= bd((uint64_t)(1023 + k) << 52); n -= k; }
	return (float)d;
}
float scalbnf(float x, int n) { return ldexpf(x, n); }
float frexpf(float x, int *e)
{
	uint32_t u = fb(x); int ex = (u >> 23) & 0xff;
	if (x == 0 || ex == 0xff) { *e = 0; return x; }
	if (ex == 0) { x *= 16777216.0f; u = fb(x); ex = ((u >> 23) & 0xff) - 24; } 
	*e = ex - 126;
	return bf((u & 0x807fffffu) | (126u << 23));
}
/* exp(r) - 1 for |r| <= ln2/2, in double: Taylor series to degree 16 (error < 1e-17) */
static double expm1_small(double r)
{
	double s = 0, t = 1;
	for (int k = 16; k >= 1; k--) s = r * (s + 1.0) / k, (void)t;
	return s;
}
static double exp_d(double x, double *m1)
{
	static const double LN2HI = 6.93147180369123816490e-01, LN2LO = 1.90821492927058770002e-10;
	double kf = x * 1.4426950408889634; kf = kf < 0 ? (double)(long long)(kf - 0.5) : (double)(long long)(kf + 0.5);
	int k = (int)kf;
	double r = (x - kf * LN2HI) - kf * LN2LO;
	double em1 = expm1_small(r);
	double p2 = bd((uint64_t)(1023 + k) << 52);
	if (m1) *m1 = (p2 - 1.0) + p2 * em1;
	return p2 + p2 * em1;
}
float expf(float x)
{
	if (isnan(x)) return x;
	if (x > 88.8f) return INFINITY;
	if (x < -104.0f) return 0.0f;
	double r = exp_d(x, 0);
	if (x < -87.0f) {   /* subnormal result: the double is rounded once, to float */
		return (float)r;
	}
	return (float)r;
}
float expm1f(float x)
{
	if (isnan(x)) return x;
	if (x > 88.8f) return INFINITY;
	if (x < -30.0f) return -1.0f;
	if (fabsf(x) < 0.34657359f) return (float)expm1_small(x);
	double m1; exp_d(x, &m1);
	return (float)m1;
}
double exp(double x) { return exp_d(x, 0); }
