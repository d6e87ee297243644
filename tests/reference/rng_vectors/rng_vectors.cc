// The test vectors of tests/reference/rng_bit_generator_test.cc and
// tests/kernels/random123_rng_bit_generator_test.cc: a standalone reimplementation of XLA:CPU's
// rng_bit_generator bits (textbook Threefry-2x32-20 and Philox-4x32-10 rounds, and the counter
// layout of docs/numerics.md "rng_bit_generator"), sharing no code with accy. It first checks
// itself: both conformance vectors (rng_bit_generator_uint64_2, rng_bit_generator_uint32_4,
// read from the testdata folder given as argv[1]) and Random123's threefry2x32 / philox4x32 on
// 100,000 random blocks; then prints the vectors as C++ initializers. Not part of the build:
//   g++ -std=c++17 -O1 tests/reference/rng_vectors/rng_vectors.cc -o /tmp/rng_vectors
//   /tmp/rng_vectors ../shared/conformance/stablehlo/stablehlo/testdata
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <Random123/threefry.h>
#include <Random123/philox.h>

using u32 = uint32_t; using u64 = uint64_t;
static u32 rotl(u32 v, int d) { return (v << d) | (v >> (32 - d)); }

// Textbook Threefry-2x32, 20 rounds.
static void tf2x32(u32 k0, u32 k1, u32& x0, u32& x1) {
  static const int R[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  u32 ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x0 += ks[0]; x1 += ks[1];
  for (int g = 0; g < 5; ++g) {
    for (int r = 0; r < 4; ++r) { x0 += x1; x1 = rotl(x1, R[(g & 1) * 4 + r]); x1 ^= x0; }
    x0 += ks[(g + 1) % 3]; x1 += ks[(g + 2) % 3] + (u32)(g + 1);
  }
}
// Textbook Philox-4x32, 10 rounds.
static void ph4x32(u32 k0, u32 k1, u32 x[4]) {
  for (int r = 0; r < 10; ++r) {
    u64 p0 = (u64)x[0] * 0xD2511F53u, p1 = (u64)x[2] * 0xCD9E8D57u;
    u32 y0 = (u32)(p1 >> 32) ^ x[1] ^ k0, y1 = (u32)p1, y2 = (u32)(p0 >> 32) ^ x[3] ^ k1, y3 = (u32)p0;
    x[0] = y0; x[1] = y1; x[2] = y2; x[3] = y3;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
}

// Output as raw u64 words (narrow types: caller truncates). bits in {8,16,32,64}.
// state: THREE_FRY -> 2 words; PHILOX -> 2 or 3 words. Returns new state.
static std::vector<u64> threefry(std::vector<u64> st, const std::vector<int64_t>& dims, int bits,
                                 std::vector<u64>& out) {
  u64 key = st[0], ctr = st[1];
  u32 k0 = (u32)key, k1 = (u32)(key >> 32);
  int64_t n = 1; for (auto d : dims) n *= d;
  out.assign(n, 0);
  if (bits == 64) {
    for (int64_t i = 0; i < n; ++i) {
      u64 c = ctr + (u64)i; u32 x0 = (u32)c, x1 = (u32)(c >> 32);
      tf2x32(k0, k1, x0, x1);
      out[i] = (u64)x0 | ((u64)x1 << 32);
    }
    return {key, ctr + (u64)n};
  }
  // 32/16/8: split one dim s (first even dim, else first max dim; scalar -> [1]).
  std::vector<int64_t> d = dims; if (d.empty()) d = {1};
  int s = -1;
  for (size_t i = 0; i < d.size(); ++i) if (d[i] % 2 == 0) { s = (int)i; break; }
  if (s < 0) for (size_t i = 0; i < d.size(); ++i) if (s < 0 || d[i] > d[s]) s = (int)i;
  std::vector<int64_t> h = d; h[s] = (d[s] + 1) / 2;
  int64_t hn = 1; for (auto v : h) hn *= v;
  for (int64_t lin = 0; lin < n; ++lin) {      // row-major over original dims
    int64_t rem = lin, hlin = 0, hstride = 1; int word = 0;
    std::vector<int64_t> idx(d.size());
    for (int k = (int)d.size() - 1; k >= 0; --k) { idx[k] = rem % d[k]; rem /= d[k]; }
    for (int k = (int)d.size() - 1; k >= 0; --k) {
      int64_t ik = idx[k];
      if (k == s) { word = (int)(ik & 1); ik >>= 1; }
      hlin += ik * hstride; hstride *= h[k];
    }
    u64 c = ctr + (u64)hlin; u32 x0 = (u32)c, x1 = (u32)(c >> 32);
    tf2x32(k0, k1, x0, x1);
    u32 w = word ? x1 : x0;
    out[lin] = bits == 32 ? w : (w & ((1u << bits) - 1));
  }
  return {key, ctr + (u64)hn};
}

static std::vector<u64> philox(std::vector<u64> st, int64_t n, int bits, std::vector<u64>& out) {
  u64 key = st[0];
  u64 lo = st[1], hi = st.size() >= 3 ? st[2] : st[0];  // size 2: Rev(state) -> hi = key
  u32 k0 = (u32)key, k1 = (u32)(key >> 32);
  int64_t per = bits == 64 ? 2 : 4;               // outputs per 128-bit block
  int64_t nb = (n + per - 1) / per;
  out.assign(n, 0);
  for (int64_t b = 0; b < nb; ++b) {
    u64 l = lo + (u64)b, hh = (l < lo) ? hi + 1 : hi;
    u32 x[4] = {(u32)l, (u32)(l >> 32), (u32)hh, (u32)(hh >> 32)};
    ph4x32(k0, k1, x);
    for (int j = 0; j < per; ++j) {
      int64_t i = b * per + j; if (i >= n) break;
      if (bits == 64) out[i] = (u64)x[2 * j] | ((u64)x[2 * j + 1] << 32);
      else out[i] = bits == 32 ? x[j] : (x[j] & ((1u << bits) - 1));
    }
  }
  u64 nl = lo + (u64)nb, nh = (nl < lo) ? hi + 1 : hi;
  if (st.size() >= 3) return {key, nl, nh};
  return {key, nl};
}

static std::vector<u64> load_hex_u64(const char* path) {
  std::ifstream f(path); std::stringstream ss; ss << f.rdbuf(); std::string t = ss.str();
  size_t p = t.find("dense<\"0x"); p += 9; size_t e = t.find('"', p);
  std::string hx = t.substr(p, e - p); std::vector<u64> v;
  for (size_t i = 0; i + 16 <= hx.size(); i += 16) {   // little-endian bytes per element
    u64 x = 0;
    for (int b = 0; b < 8; ++b) x |= (u64)std::stoul(hx.substr(i + 2 * b, 2), nullptr, 16) << (8 * b);
    v.push_back(x);
  }
  return v;
}

static void CheckConformanceAndRandom123(const std::string& dir) {
  std::vector<u64> out;
  // Vector 1: state [3,3], scalar ui64.
  auto ns = threefry({3, 3}, {}, 64, out);
  printf("V1 out=%llu (expect 3349939604322698703) state=[%llu,%llu] (expect [3,4]) %s\n",
         (unsigned long long)out[0], (unsigned long long)ns[0], (unsigned long long)ns[1],
         (out[0] == 3349939604322698703ull && ns[0] == 3 && ns[1] == 4) ? "OK" : "FAIL");
  // Vector 2: u32 [1,4,0,1] -> u64 [1|4<<32, 0|1<<32], 100x100 ui64.
  std::vector<u64> st = {1ull | (4ull << 32), 0ull | (1ull << 32)};
  ns = threefry(st, {100, 100}, 64, out);
  auto exp = load_hex_u64((dir + "/rng_bit_generator_uint32_4.mlir").c_str());
  int64_t mism = 0; for (size_t i = 0; i < out.size(); ++i) mism += (i >= exp.size() || out[i] != exp[i]);
  printf("V2 expected elems=%zu first: %016llx %016llx %016llx ; got %016llx %016llx %016llx ; mismatches=%lld\n",
         exp.size(), (unsigned long long)exp[0], (unsigned long long)exp[1], (unsigned long long)exp[2],
         (unsigned long long)out[0], (unsigned long long)out[1], (unsigned long long)out[2], (long long)mism);
  printf("V2 new state u32 = [%u,%u,%u,%u] (expect [1,4,10000,1])\n", (u32)ns[0], (u32)(ns[0] >> 32),
         (u32)ns[1], (u32)(ns[1] >> 32));
  // Cross-check rounds vs Random123 on pseudo-random inputs.
  u64 s = 0x243F6A8885A308D3ull; auto nx = [&] { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (u32)s; };
  int bad_tf = 0, bad_ph = 0;
  for (int t = 0; t < 100000; ++t) {
    u32 k0 = nx(), k1 = nx(), a = nx(), b = nx(), c = nx(), d = nx();
    u32 x0 = a, x1 = b; tf2x32(k0, k1, x0, x1);
    threefry2x32_ctr_t tc = {{a, b}}; threefry2x32_key_t tk = {{k0, k1}};
    threefry2x32_ctr_t tr = threefry2x32(tc, tk);
    bad_tf += (tr.v[0] != x0 || tr.v[1] != x1);
    u32 x[4] = {a, b, c, d}; ph4x32(k0, k1, x);
    philox4x32_ctr_t pc = {{a, b, c, d}}; philox4x32_key_t pk = {{k0, k1}};
    philox4x32_ctr_t pr = philox4x32(pc, pk);
    bad_ph += (pr.v[0] != x[0] || pr.v[1] != x[1] || pr.v[2] != x[2] || pr.v[3] != x[3]);
  }
  printf("Random123 cross-check (100000 random blocks): threefry2x32 mismatches=%d, philox4x32 mismatches=%d\n",
         bad_tf, bad_ph);
  // V1 again via Random123 directly.
  threefry2x32_ctr_t c1 = {{3u, 0u}}; threefry2x32_key_t k1 = {{3u, 0u}};
  auto r1 = threefry2x32(c1, k1);
  printf("V1 via Random123: %llu\n", (unsigned long long)((u64)r1.v[0] | ((u64)r1.v[1] << 32)));
  // Informational: philox u32[5] from state [3,3] (no conformance vector available).
  ns = philox({3, 3}, 5, 32, out);
  printf("PHILOX u32[5] state[3,3]:"); for (auto v : out) printf(" %llu", (unsigned long long)v);
  printf(" -> state [%llu,%llu]\n", (unsigned long long)ns[0], (unsigned long long)ns[1]);
}

static void print(const char* name, const std::vector<u64>& out, const std::vector<u64>& st) {
  printf("%s: out = {", name);
  for (size_t i = 0; i < out.size(); ++i) printf("%s%lluu", i ? ", " : "", (unsigned long long)out[i]);
  printf("} state = {");
  for (size_t i = 0; i < st.size(); ++i) printf("%s0x%016llxu", i ? ", " : "", (unsigned long long)st[i]);
  printf("}\n");
}
int main(int argc, char** argv) {
  CheckConformanceAndRandom123(argc > 1 ? argv[1] : "../shared/conformance/stablehlo/stablehlo/testdata");
  std::vector<u64> out, st;
  st = threefry({1, 2}, {2, 2}, 64, out); print("spec example THREE_FRY u64[2,2] state[1,2]", out, st);
  const u64 K = 0x0123456789ABCDEFull;
  st = threefry({K, 0xFFFFFFFFFFFFFFFEull}, {3, 3}, 32, out); print("THREE_FRY u32[3,3] state[K,2^64-2]", out, st);
  st = threefry({K, 0xFFFFFFFFFFFFFFFEull}, {3, 3}, 64, out); print("THREE_FRY u64[3,3] state[K,2^64-2]", out, st);
  st = threefry({K, 10}, {3, 2}, 32, out); print("THREE_FRY u32[3,2] state[K,10]", out, st);
  st = threefry({K, 10}, {5}, 32, out); print("THREE_FRY u32[5] state[K,10]", out, st);
  st = threefry({K, 10}, {}, 32, out); print("THREE_FRY u32[] state[K,10]", out, st);
  st = threefry({K, 10}, {2, 3}, 16, out); print("THREE_FRY u16[2,3] state[K,10]", out, st);
  st = threefry({K, 10}, {3}, 8, out); print("THREE_FRY u8[3] state[K,10]", out, st);
  st = philox({3, 3}, 5, 32, out); print("PHILOX u32[5] state[3,3]", out, st);
  st = philox({K, 0xFFFFFFFFFFFFFFFFull, 7}, 3, 64, out); print("PHILOX u64[3] state[K,2^64-1,7]", out, st);
  st = philox({K, 0xFFFFFFFFFFFFFFFFull, 7}, 6, 32, out); print("PHILOX u32[6] state[K,2^64-1,7]", out, st);
  st = philox({K, 0xFFFFFFFFFFFFFFFFull}, 8, 32, out); print("PHILOX u32[8] state[K,2^64-1]", out, st);
  st = philox({K, 5, 9}, 5, 16, out); print("PHILOX u16[5] state[K,5,9]", out, st);
  return 0;
}
