/* Compiler helpers that clang calls for Hexagon v66 (written for Hexscope in plain C, not from
 * compiler-rt): integer division and the float/double operations with no instruction (divide,
 * double multiply). All are IEEE round-to-nearest-even, as the toolchain's are documented to be;
 * subnormal inputs and results are handled. Built without the target's division helpers being
 * reachable: every loop here is shift-and-subtract. */
#include <stdint.h>

/* ---- integers ---- */
static uint64_t udivmod64(uint64_t n, uint64_t d, uint64_t *rem)
{
	if (d == 0) { if (rem) *rem = n; return ~0ull; }
	uint64_t q = 0, r = 0;
	for (int i = 63; i >= 0; i--) {
		r = (r << 1) | ((n >> i) & 1);
		if (r >= d) { r -= d; q |= 1ull << i; }
	}
	if (rem) *rem = r;
	return q;
}
static uint32_t udivmod32(uint32_t n, uint32_t d, uint32_t *rem)
{
	if (d == 0) { if (rem) *rem = n; return ~0u; }
	uint32_t q = 0, r = 0;
	for (int i = 31; i >= 0; i--) {
		r = (r << 1) | ((n >> i) & 1);
		if (r >= d) { r -= d; q |= 1u << i; }
	}
	if (rem) *rem = r;
	return q;
}
uint32_t __hexagon_udivsi3(uint32_t a, uint32_t b) { return udivmod32(a, b, 0); }
uint32_t __hexagon_umodsi3(uint32_t a, uint32_t b) { uint32_t r; udivmod32(a, b, &r); return r; }
int32_t __hexagon_divsi3(int32_t a, int32_t b)
{
	uint32_t ua = a < 0 ? -(uint32_t)a : (uint32_t)a, ub = b < 0 ? -(uint32_t)b : (uint32_t)b;
	uint32_t q = udivmod32(ua, ub, 0);
	return (int32_t)(((a < 0) != (b < 0)) ? -q : q);
}
int32_t __hexagon_modsi3(int32_t a, int32_t b)
{
	uint32_t ua = a < 0 ? -(uint32_t)a : (uint32_t)a, ub = b < 0 ? -(uint32_t)b : (uint32_t)b, r;
	udivmod32(ua, ub, &r);
	return (int32_t)(a < 0 ? -r : r);
}
uint64_t __hexagon_udivdi3(uint64_t a, uint64_t b) { return udivmod64(a, b, 0); }
uint64_t __hexagon_umoddi3(uint64_t a, uint64_t b) { uint64_t r; udivmod64(a, b, &r); return r; }
int64_t __hexagon_divdi3(int64_t a, int64_t b)
{
	uint64_t ua = a < 0 ? -(uint64_t)a : (uint64_t)a, ub = b < 0 ? -(uint64_t)b : (uint64_t)b;
	uint64_t q = udivmod64(ua, ub, 0);
	return (int64_t)(((a < 0) != (b < 0)) ? -q : q);
}
int64_t __hexagon_moddi3(int64_t a, int64_t b)
{
	uint64_t ua = a < 0 ? -(uint64_t)a : (uint64_t)a, ub = b < 0 ? -(uint64_t)b : (uint64_t)b, r;
	udivmod64(ua, ub, &r);
	return (int64_t)(a < 0 ? -r : r);
}

/* ---- binary64 ---- */
static inline uint64_t dbits(double x) { union { double d; uint64_t u; } v = { x }; return v.u; }
static inline double dfrom(uint64_t u) { union { uint64_t u; double d; } v = { u }; return v.d; }
static inline uint32_t fbits(float x) { union { float f; uint32_t u; } v = { x }; return v.u; }
static inline float ffrom(uint32_t u) { union { uint32_t u; float f; } v = { u }; return v.f; }
static int clz64(uint64_t x) { return x ? __builtin_clzll(x) : 64; }

/* value = sig * 2^(exp - 1075 + 1 - 11)... : sig has its leading one at bit 62 and the biased
 * exponent is exp (the value is 1.xxx * 2^(exp-1023)); sticky bits are in sig's low 10 bits */
static double round_pack_d(int sign, int exp, uint64_t sig)
{
	if (exp <= 0) {                       /* subnormal: shift right keeping a sticky bit */
		int sh = 1 - exp;
		sig = sh >= 63 ? (sig != 0) : (sig >> sh) | ((sig & ((1ull << sh) - 1)) != 0);
		exp = 0;
	}
	uint64_t lsb = (sig >> 10) & 1, rnd = sig & 0x3ff;
	sig >>= 10;
	if (rnd > 0x200 || (rnd == 0x200 && lsb)) sig++;
	if (exp == 0) {                       /* rounding may have made it normal */
		if (sig >> 52) exp = 1;
		return dfrom(((uint64_t)sign << 63) | ((uint64_t)exp << 52) | (sig & ((1ull << 52) - 1)));
	}
	if (sig >> 53) { sig >>= 1; exp++; }
	if (exp >= 0x7ff) return dfrom(((uint64_t)sign << 63) | (0x7ffull << 52));
	return dfrom(((uint64_t)sign << 63) | ((uint64_t)exp << 52) | (sig & ((1ull << 52) - 1)));
}
/* unpack a finite nonzero: 53-bit significand normalised (leading one at bit 52), exponent */
static void unpack_d(uint64_t u, uint64_t *m, int *e)
{
	int ex = (u >> 52) & 0x7ff; uint64_t f = u & ((1ull << 52) - 1);
	if (ex == 0) { int s = clz64(f) - 11; f <<= s; ex = 1 - s; }
	else f |= 1ull << 52;
	*m = f; *e = ex;
}
static const uint64_t DNAN = 0x7ff8000000000000ull;
double __hexagon_muldf3(double a, double b)
{
	uint64_t ua = dbits(a), ub = dbits(b);
	int sign = (ua ^ ub) >> 63;
	int ea = (ua >> 52) & 0x7ff, eb = (ub >> 52) & 0x7ff;
	uint64_t fa = ua & ((1ull << 52) - 1), fb = ub & ((1ull << 52) - 1);
	if ((ea == 0x7ff && fa) || (eb == 0x7ff && fb)) return dfrom(DNAN);
	int za = (ua << 1) == 0, zb = (ub << 1) == 0;
	if (ea == 0x7ff || eb == 0x7ff) {
		if (za || zb) return dfrom(DNAN);
		return dfrom(((uint64_t)sign << 63) | (0x7ffull << 52));
	}
	if (za || zb) return dfrom((uint64_t)sign << 63);
	uint64_t ma, mb; unpack_d(ua, &ma, &ea); unpack_d(ub, &mb, &eb);
	/* 106-bit product from 32-bit halves */
	uint64_t al = ma & 0xffffffffu, ah = ma >> 32, bl = mb & 0xffffffffu, bh = mb >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	uint64_t lo = (ll & 0xffffffffu) | (mid << 32);
	uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	/* product in [2^104, 2^106): bring the leading one to bit 62 of sig */
	int exp = ea + eb - 1023;
	int top = 63 - clz64(hi) + 64;          /* bit index of the leading one (104 or 105) */
	exp += top - 104;
	int sh = top - 62;                       /* 42 or 43 */
	uint64_t sig = (hi << (64 - sh)) | (lo >> sh);
	if (lo & ((1ull << sh) - 1)) sig |= 1;
	return round_pack_d(sign, exp, sig);
}
double __hexagon_divdf3(double a, double b)
{
	uint64_t ua = dbits(a), ub = dbits(b);
	int sign = (ua ^ ub) >> 63;
	int ea = (ua >> 52) & 0x7ff, eb = (ub >> 52) & 0x7ff;
	uint64_t fa = ua & ((1ull << 52) - 1), fb = ub & ((1ull << 52) - 1);
	if ((ea == 0x7ff && fa) || (eb == 0x7ff && fb)) return dfrom(DNAN);
	int za = (ua << 1) == 0, zb = (ub << 1) == 0;
	uint64_t inf = ((uint64_t)sign << 63) | (0x7ffull << 52), zero = (uint64_t)sign << 63;
	if (ea == 0x7ff) return eb == 0x7ff ? dfrom(DNAN) : dfrom(inf);
	if (eb == 0x7ff) return dfrom(zero);
	if (zb) return za ? dfrom(DNAN) : dfrom(inf);
	if (za) return dfrom(zero);
	uint64_t ma, mb; unpack_d(ua, &ma, &ea); unpack_d(ub, &mb, &eb);
	int exp = ea - eb + 1023;
	if (ma < mb) { ma <<= 1; exp--; }
	/* quotient bits: 63 of them, so the leading one lands at bit 62 */
	uint64_t q = 0, r = ma;
	for (int i = 62; i >= 0; i--) {
		if (r >= mb) { r -= mb; q |= 1ull << i; }
		r <<= 1;
	}
	if (r) q |= 1;
	return round_pack_d(sign, exp, q);
}

/* ---- binary32 division ---- */
float __hexagon_divsf3(float a, float b)
{
	uint32_t ua = fbits(a), ub = fbits(b);
	int sign = (ua ^ ub) >> 31;
	int ea = (ua >> 23) & 0xff, eb = (ub >> 23) & 0xff;
	uint32_t fa = ua & 0x7fffff, fb = ub & 0x7fffff;
	if ((ea == 0xff && fa) || (eb == 0xff && fb)) return ffrom(0x7fc00000u);
	int za = (ua << 1) == 0, zb = (ub << 1) == 0;
	uint32_t inf = ((uint32_t)sign << 31) | 0x7f800000u, zero = (uint32_t)sign << 31;
	if (ea == 0xff) return eb == 0xff ? ffrom(0x7fc00000u) : ffrom(inf);
	if (eb == 0xff) return ffrom(zero);
	if (zb) return za ? ffrom(0x7fc00000u) : ffrom(inf);
	if (za) return ffrom(zero);
	/* exact in double: a/b as a double quotient then rounded once would double-round; do it
	 * in integers instead */
	uint64_t ma = fa, mb = fb;
	if (ea == 0) { int s = __builtin_clz(fa) - 8; ma <<= s; ea = 1 - s; } else ma |= 1u << 23;
	if (eb == 0) { int s = __builtin_clz(fb) - 8; mb <<= s; eb = 1 - s; } else mb |= 1u << 23;
	int exp = ea - eb + 127;
	if (ma < mb) { ma <<= 1; exp--; }
	uint64_t q = 0, r = ma;
	for (int i = 30; i >= 0; i--) {          /* leading one at bit 30: 7 rounding bits */
		if (r >= mb) { r -= mb; q |= 1ull << i; }
		r <<= 1;
	}
	uint32_t sig = (uint32_t)q | (r != 0);
	if (exp <= 0) {
		int sh = 1 - exp;
		sig = sh >= 31 ? (sig != 0) : (sig >> sh) | ((sig & ((1u << sh) - 1)) != 0);
		exp = 0;
	}
	uint32_t lsb = (sig >> 7) & 1, rnd = sig & 0x7f;
	sig >>= 7;
	if (rnd > 0x40 || (rnd == 0x40 && lsb)) sig++;
	if (exp == 0) { if (sig >> 23) exp = 1; return ffrom(((uint32_t)sign << 31) | ((uint32_t)exp << 23) | (sig & 0x7fffff)); }
	if (sig >> 24) { sig >>= 1; exp++; }
	if (exp >= 0xff) return ffrom(inf);
	return ffrom(((uint32_t)sign << 31) | ((uint32_t)exp << 23) | (sig & 0x7fffff));
}

/* clang's Hexagon memcpy for copies it knows are 8-byte multiples of at least 32 bytes */
void *memcpy(void *d, const void *s, unsigned long n);
void *__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void *d, const void *s, unsigned long n)
{ return memcpy(d, s, n); }
