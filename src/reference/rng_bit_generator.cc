// Reference evaluation of rng_bit_generator (StableHLO spec "rng_bit_generator"). The spec
// leaves the bits to the implementation; accy's are XLA:CPU's (docs/numerics.md
// "rng_bit_generator" has the rules and where they come from). The two ciphers are written out
// here from Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3"
// (SC 2011), not taken from Random123's headers, which the kernel uses
// (kernels/random123_rng_bit_generator.cc), and every output element computes its own block
// from its own index, so the evaluator shares neither code nor loop structure with the kernel:
//   Threefry-2x32-20: 20 rounds of x0 += x1; x1 = rotl(x1, R[r mod 8]); x1 ^= x0, with
//     R = 13 15 26 6 17 29 16 24, and a key injection after every 4th round (and before the
//     first) from the key schedule k0, k1, k2 = 0x1BD11BDA ^ k0 ^ k1 plus the injection number.
//   Philox-4x32-10: 10 rounds of (x0, x1, x2, x3) -> (hi(M1 x2) ^ x1 ^ k0, lo(M1 x2),
//     hi(M0 x0) ^ x3 ^ k1, lo(M0 x0)) with M0 = 0xD2511F53, M1 = 0xCD9E8D57, the key bumped
//     by the Weyl constants (0x9E3779B9, 0xBB67AE85) between rounds.
// The key is state[0] (k0 its low 32 bits, k1 its high 32 bits) for both; DEFAULT is PHILOX.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "src/reference/evaluator_internal.h"

namespace accy::reference {
namespace {

using u32 = uint32_t;
using u64 = uint64_t;

u32 Low(u64 v) { return static_cast<u32>(v); }
u32 High(u64 v) { return static_cast<u32>(v >> 32); }
u64 Join(u32 low, u32 high) { return static_cast<u64>(low) | (static_cast<u64>(high) << 32); }
u32 RotateLeft(u32 v, int bits) { return (v << bits) | (v >> (32 - bits)); }

// Threefry-2x32 with 20 rounds on the block (x0, x1) under key (k0, k1).
std::array<u32, 2> Threefry2x32(u32 k0, u32 k1, u32 x0, u32 x1) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const u32 schedule[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x0 += schedule[0];
  x1 += schedule[1];
  for (int round = 0; round < 20; ++round) {
    x0 += x1;
    x1 = RotateLeft(x1, kRotations[round % 8]);
    x1 ^= x0;
    if (round % 4 == 3) {
      const int injection = round / 4 + 1;  // 1 .. 5
      x0 += schedule[injection % 3];
      x1 += schedule[(injection + 1) % 3] + static_cast<u32>(injection);
    }
  }
  return {x0, x1};
}

// Philox-4x32 with 10 rounds on the block x under key (k0, k1).
std::array<u32, 4> Philox4x32(u32 k0, u32 k1, std::array<u32, 4> x) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const u64 product0 = static_cast<u64>(0xD2511F53u) * x[0];
    const u64 product1 = static_cast<u64>(0xCD9E8D57u) * x[2];
    x = {High(product1) ^ x[1] ^ k0, Low(product1), High(product0) ^ x[3] ^ k1, Low(product0)};
  }
  return x;
}

// A 128-bit counter (low word first) plus `n`, carrying into the high word.
std::array<u64, 2> Add128(std::array<u64, 2> counter, u64 n) {
  const u64 low = counter[0] + n;
  return {low, counter[1] + (low < counter[0] ? 1 : 0)};
}

// THREE_FRY's 32-bit layout: the dim the output is split along (the first even-sized dim, else
// the first of the largest size) and the shape whose elements are the blocks (that dim halved,
// rounded up). A scalar is shape [1].
struct SplitShape {
  std::vector<int64_t> dims;  // the output's dims ([1] for a scalar)
  std::vector<int64_t> half;  // dims with dims[split] -> ceil(dims[split] / 2)
  size_t split = 0;
  int64_t half_elements = 1;
};

SplitShape SplitForThreefry32(std::vector<int64_t> dims) {
  SplitShape shape;
  if (dims.empty()) dims = {1};
  bool found = false;
  for (size_t d = 0; d < dims.size() && !found; ++d) {
    if (dims[d] % 2 == 0) {
      shape.split = d;
      found = true;
    }
  }
  if (!found) {
    for (size_t d = 1; d < dims.size(); ++d) {
      if (dims[d] > dims[shape.split]) shape.split = d;
    }
  }
  shape.half = dims;
  shape.half[shape.split] = (dims[shape.split] + 1) / 2;
  for (int64_t d : shape.half) shape.half_elements *= d;
  shape.dims = std::move(dims);
  return shape;
}

// THREE_FRY, 32-bit words: element `index` (row-major over shape.dims) is word (i_s mod 2) of
// the block whose counter is state[1] + the row-major index of (..., i_s / 2, ...) in the half
// shape.
u32 Threefry32Element(const SplitShape& shape, u64 key, u64 counter, int64_t index) {
  std::vector<int64_t> position(shape.dims.size());
  for (size_t d = shape.dims.size(); d-- > 0;) {
    position[d] = index % shape.dims[d];
    index /= shape.dims[d];
  }
  const int word = static_cast<int>(position[shape.split] % 2);
  position[shape.split] /= 2;
  int64_t half_index = 0;
  for (size_t d = 0; d < shape.half.size(); ++d) {
    half_index = half_index * shape.half[d] + position[d];
  }
  const u64 c = counter + static_cast<u64>(half_index);
  return Threefry2x32(Low(key), High(key), Low(c), High(c))[static_cast<size_t>(word)];
}

// Writes the low `width` bytes of `bits` as element `index` of `t` (little-endian, as host
// tensors are): integers and floats alike get the bits, so a float output is the bitcast of
// the unsigned integer of its width.
void StoreBits(Tensor& t, int64_t index, u64 bits, int64_t width) {
  uint8_t* bytes = static_cast<uint8_t*>(t.data()) + index * width;
  for (int64_t b = 0; b < width; ++b) bytes[b] = static_cast<uint8_t>(bits >> (8 * b));
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateRngBitGenerator(const Operation& op,
                                                      std::span<const Tensor> operands) {
  const Tensor& initial_state = operands[0];
  const std::string algorithm = op.GetString("rng_algorithm").value_or("DEFAULT");
  const TensorType& output_type = op.result(1)->type();
  const int64_t width = ElementByteWidth(output_type.element_type());
  const int64_t n = output_type.element_count();
  std::vector<u64> state(static_cast<size_t>(initial_state.element_count()));
  for (size_t i = 0; i < state.size(); ++i) {
    state[i] = initial_state.data_as<u64>()[i];
  }
  const u64 key = state[0];
  ACCY_ASSIGN_OR_RETURN(Tensor output, Tensor::Allocate(output_type));
  std::vector<u64> new_state = state;
  if (algorithm == "THREE_FRY") {
    const u64 counter = state[1];
    if (width == 8) {
      // One block per element, counter state[1] + index (mod 2^64); the element is y0 | y1 << 32.
      for (int64_t i = 0; i < n; ++i) {
        const u64 c = counter + static_cast<u64>(i);
        const std::array<u32, 2> y = Threefry2x32(Low(key), High(key), Low(c), High(c));
        StoreBits(output, i, Join(y[0], y[1]), width);
      }
      new_state[1] = counter + static_cast<u64>(n);
    } else {
      // 8- and 16-bit outputs are the 32-bit words of the same shape, truncated.
      const SplitShape shape = SplitForThreefry32(output_type.dims());
      for (int64_t i = 0; i < n; ++i) {
        StoreBits(output, i, Threefry32Element(shape, key, counter, i), width);
      }
      new_state[1] = counter + static_cast<u64>(shape.half_elements);
    }
  } else {  // PHILOX, and DEFAULT (PHILOX on CPU)
    // 3 words: counter (state[1], state[2]); 2 words: (state[1], state[0]), the key as its high
    // word. Block b runs on counter + b; its input words are the counter's four 32-bit halves,
    // low first.
    const std::array<u64, 2> counter = {state[1], state.size() == 3 ? state[2] : state[0]};
    const int64_t per_block = width == 8 ? 2 : 4;
    const int64_t blocks = (n + per_block - 1) / per_block;
    for (int64_t i = 0; i < n; ++i) {
      const std::array<u64, 2> c = Add128(counter, static_cast<u64>(i / per_block));
      const std::array<u32, 4> y =
          Philox4x32(Low(key), High(key), {Low(c[0]), High(c[0]), Low(c[1]), High(c[1])});
      const size_t k = static_cast<size_t>(i % per_block);
      // 64-bit: element 2b + k is words (2k, 2k + 1); narrower: word k, truncated.
      const u64 bits = width == 8 ? Join(y[2 * k], y[2 * k + 1]) : y[k];
      StoreBits(output, i, bits, width);
    }
    const std::array<u64, 2> advanced = Add128(counter, static_cast<u64>(blocks));
    new_state[1] = advanced[0];
    if (state.size() == 3) new_state[2] = advanced[1];  // 2 words: the carry is dropped
  }
  ACCY_ASSIGN_OR_RETURN(Tensor output_state, Tensor::Allocate(initial_state.type()));
  for (size_t i = 0; i < new_state.size(); ++i) output_state.data_as<u64>()[i] = new_state[i];
  std::vector<Tensor> results;
  results.push_back(std::move(output_state));
  results.push_back(std::move(output));
  return results;
}

}  // namespace accy::reference
