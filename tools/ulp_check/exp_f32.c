// Exhaustive accuracy check of the JIT's inline f32 exp (jit/vector_math.cc, EmitExpF32): the
// same sequence of IEEE operations written in C with fmaf, against glibc's expf (what the
// reference evaluator calls), over all 2^32 f32 inputs. Prints the largest distance in ulps
// of the glibc result and how many inputs differ by more than half an ulp. Not built by CMake:
//   gcc -O2 -march=native -ffp-contract=off -o /tmp/exp_f32 tools/ulp_check/exp_f32.c -lm
//   /tmp/exp_f32      # ~1 minute on one core
// Keep it in step with EmitExpF32 when that changes (constants, evaluation order).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static float FromBits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t Bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

// kExpMinimax of jit/vector_math.cc.
static const float kC[6] = {0x1p+0f,        0x1.fffffcp-2f, 0x1.55541ap-3f,
                            0x1.555822p-5f, 0x1.126792p-7f, 0x1.6ae72p-10f};

static float InlineExp(float x) {
  float xc = x < -105.0f ? -105.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  const float shifted = fmaf(xc, 0x1.715476p+0f, 0x1.8p23f);
  const float n = shifted - 0x1.8p23f;
  const int32_t n_int = (int32_t)(Bits(shifted) - 0x4B400000u);
  float r = fmaf(n, -0x1.62e43p-1f, xc);
  r = fmaf(n, 0x1.05c610p-29f, r);
  // Horner's scheme, folded into 1 + r P(r) (ExpOnePlusRP).
  float p = fmaf(kC[5], r, kC[4]);
  for (int k = 3; k >= 0; --k) p = fmaf(p, r, kC[k]);
  const float e = fmaf(p, r, 1.0f);
  const int32_t n1 = n_int >> 1;
  const int32_t n2 = n_int - n1;
  const float e_scaled = FromBits(Bits(e) + ((uint32_t)n1 << 23));
  const float result = e_scaled * FromBits((uint32_t)(n2 + 127) << 23);
  return isnan(x) ? x : result;
}

// |got - want| in ulps of want (the f32 spacing at want's binade, subnormal spacing below).
static double UlpDistance(float got, float want) {
  if (isnan(want)) return isnan(got) ? 0.0 : INFINITY;
  if (got == want) return 0.0;
  if (isinf(want) || isinf(got)) return INFINITY;
  int exponent;
  frexp((double)want, &exponent);
  const double ulp = ldexp(1.0, exponent - 24 < -149 ? -149 : exponent - 24);
  return fabs((double)got - (double)want) / ulp;
}

int main(void) {
  double worst = 0.0;
  uint32_t worst_bits = 0;
  long above_half = 0;
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; ++u) {
    const float x = FromBits((uint32_t)u);
    const float got = InlineExp(x);
    const float want = expf(x);
    if (Bits(got) == Bits(want)) continue;
    const double d = UlpDistance(got, want);
    if (d > 0.5) ++above_half;
    if (d > worst) {
      worst = d;
      worst_bits = (uint32_t)u;
    }
  }
  printf("exp f32: max %.3f ulp (x = %a), %ld inputs differ by more than 0.5 ulp\n", worst,
         FromBits(worst_bits), above_half);
  return worst <= 1.0 ? 0 : 1;
}
