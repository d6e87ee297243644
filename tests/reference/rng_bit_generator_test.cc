// Reference evaluator tests for rng_bit_generator (src/reference/rng_bit_generator.cc) against
// fixed vectors, each output element compared bit for bit and the new state word for word:
// - the spec's own example (THREE_FRY, state [1, 2], tensor<2x2xui64>; spec
//   "rng_bit_generator", Examples) and the conformance suite's rng_bit_generator_uint64_2
//   (THREE_FRY, state [3, 3], a scalar ui64: XLA:CPU's bits);
// - THREE_FRY with 32-, 16- and 8-bit outputs (split dims: even, odd with the largest first, a
//   scalar) and PHILOX with 2- and 3-word states, 32-, 16- and 64-bit outputs, the 64-bit and
//   128-bit counter wrapping. These were printed by tests/reference/rng_vectors/
//   rng_vectors.cc, a standalone program (textbook rounds checked against Random123 on 100,000
//   random blocks, and reproducing both conformance vectors) that shares no code with accy;
// - float and signed outputs as the bits of the unsigned type of their width, DEFAULT as PHILOX,
//   and empty outputs (the state advances by the blocks of the shape: none, or for THREE_FRY's
//   32-bit layout of shape [3, 0], none).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

constexpr uint64_t kKey = 0x0123456789ABCDEFull;

struct Vector {
  std::string name;
  std::string algorithm;
  std::vector<uint64_t> state;
  E type;
  std::vector<int64_t> dims;
  std::vector<uint64_t> bits;  // each output element's bits, zero-extended
  std::vector<uint64_t> new_state;
};

// main(state) -> rng_bit_generator(state) on the reference evaluator.
StatusOr<std::vector<Tensor>> Generate(const std::string& algorithm,
                                       const std::vector<uint64_t>& state, E type,
                                       const std::vector<int64_t>& dims) {
  const TensorType state_type = Type(E::kU64, {static_cast<int64_t>(state.size())});
  return RunAll({state_type, Type(type, dims)}, {Make<uint64_t>(E::kU64, state_type.dims(), state)},
                [&](FunctionBuilder& b, std::span<Value* const> p) {
                  return b.RngBitGenerator(p[0], algorithm, Type(type, dims));
                });
}

// Element i of `t` as its raw bits (little-endian host bytes), zero-extended.
uint64_t BitsAt(const Tensor& t, int64_t i) {
  const int64_t width = ElementByteWidth(t.element_type());
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const uint8_t*>(t.data()) + i * width,
              static_cast<size_t>(width));
  return bits;
}

void ExpectVector(const Vector& v) {
  SCOPED_TRACE(v.name);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> results, Generate(v.algorithm, v.state, v.type, v.dims));
  ASSERT_EQ(results.size(), 2u);
  ExpectTensor<uint64_t>(results[0], E::kU64, {static_cast<int64_t>(v.state.size())},
                         v.new_state);
  const Tensor& output = results[1];
  EXPECT_EQ(output.type(), Type(v.type, v.dims));
  ASSERT_EQ(output.element_count(), static_cast<int64_t>(v.bits.size()));
  for (int64_t i = 0; i < output.element_count(); ++i) {
    EXPECT_EQ(BitsAt(output, i), v.bits[static_cast<size_t>(i)]) << "element " << i;
  }
}

TEST(RngBitGeneratorTest, ThreeFry64MatchesTheSpecExampleAndTheConformanceVector) {
  ExpectVector({"spec example", "THREE_FRY", {1, 2}, E::kU64, {2, 2},
                {9236835810183407956u, 16087790271692313299u, 18212823393184779219u,
                 2658481902456610144u},
                {1, 6}});
  ExpectVector({"rng_bit_generator_uint64_2", "THREE_FRY", {3, 3}, E::kU64, {},
                {3349939604322698703u}, {3, 4}});
  // Counters state[1] + i wrap modulo 2^64: 2^64 - 2 .. 6.
  ExpectVector({"u64[3,3], counter wraps", "THREE_FRY", {kKey, 0xFFFFFFFFFFFFFFFEu}, E::kU64,
                {3, 3},
                {16256412134126395739u, 12463928418108273812u, 7725297290937948297u,
                 15266505729992108295u, 10291147241650447857u, 181511655089183192u,
                 1662950970683407293u, 9044622514639930014u, 11834170340226098994u},
                {kKey, 7}});
}

TEST(RngBitGeneratorTest, ThreeFry32SplitsTheFirstEvenDimElseTheLargest) {
  // [3, 3]: no even dim, dim 0 (the first of the largest) halves to 2: the blocks are [2, 3],
  // rows 0 and 1 are words 0 and 1 of blocks 0-2, row 2 word 0 of blocks 3-5; 6 blocks, and the
  // counter wraps.
  ExpectVector({"u32[3,3]", "THREE_FRY", {kKey, 0xFFFFFFFFFFFFFFFEu}, E::kU32, {3, 3},
                {2968789339u, 188576916u, 2862930057u, 3784990900u, 2901984476u, 1798685940u,
                 1973758215u, 902882801u, 2083461592u},
                {kKey, 4}});
  // [3, 2]: dim 1 is even; blocks [3, 1]: element (i, j) is word j of block i.
  ExpectVector({"u32[3,2]", "THREE_FRY", {kKey, 10}, E::kU32, {3, 2},
                {3933500718u, 721802571u, 3928695743u, 741696269u, 957681320u, 1269266626u},
                {kKey, 13}});
  // [5]: blocks [3], the last one's word 1 unused; the same words as [3, 2].
  ExpectVector({"u32[5]", "THREE_FRY", {kKey, 10}, E::kU32, {5},
                {3933500718u, 721802571u, 3928695743u, 741696269u, 957681320u}, {kKey, 13}});
  // A scalar is [1]: one block, word 0.
  ExpectVector({"u32[]", "THREE_FRY", {kKey, 10}, E::kU32, {}, {3933500718u}, {kKey, 11}});
}

TEST(RngBitGeneratorTest, NarrowOutputsAreThe32BitWordsTruncated) {
  ExpectVector({"u16[2,3]", "THREE_FRY", {kKey, 10}, E::kU16, {2, 3},
                {29998u, 9151u, 3752u, 54603u, 25357u, 30914u}, {kKey, 13}});
  ExpectVector({"u8[3]", "THREE_FRY", {kKey, 10}, E::kU8, {3}, {46u, 75u, 191u}, {kKey, 12}});
  ExpectVector({"PHILOX u16[5]", "PHILOX", {kKey, 5, 9}, E::kU16, {5},
                {39749u, 31741u, 24540u, 59803u, 31264u}, {kKey, 7, 9}});
}

TEST(RngBitGeneratorTest, PhiloxCountersAndStates) {
  // 2 words: counter (state[1], state[0]); 2 blocks of 4 words for 5 elements.
  ExpectVector({"u32[5], 2 words", "PHILOX", {3, 3}, E::kU32, {5},
                {3809047513u, 2759391306u, 1066741709u, 2309652990u, 3144060952u}, {3, 5}});
  // 3 words: counter (state[1], state[2]); block 1 carries into the high word.
  ExpectVector({"u64[3], 3 words", "PHILOX", {kKey, 0xFFFFFFFFFFFFFFFFu, 7}, E::kU64, {3},
                {17293342034621550241u, 12861849058137104743u, 413423353789156831u},
                {kKey, 1, 8}});
  ExpectVector({"u32[6], 3 words", "PHILOX", {kKey, 0xFFFFFFFFFFFFFFFFu, 7}, E::kU32, {6},
                {3639791265u, 4026419956u, 3371458919u, 2994632594u, 2423524831u, 96257625u},
                {kKey, 1, 8}});
  // 2 words: block 1 still carries into the counter's high word (the key), but the new state
  // keeps the low word only.
  ExpectVector({"u32[8], 2 words, carry", "PHILOX", {kKey, 0xFFFFFFFFFFFFFFFFu}, E::kU32, {2, 4},
                {1105943027u, 812877280u, 1535849353u, 2724394620u, 1879495268u, 3609187550u,
                 989808270u, 1085667176u},
                {kKey, 1}});
}

TEST(RngBitGeneratorTest, DefaultIsPhilox) {
  ExpectVector({"DEFAULT u32[5]", "DEFAULT", {3, 3}, E::kU32, {5},
                {3809047513u, 2759391306u, 1066741709u, 2309652990u, 3144060952u}, {3, 5}});
}

TEST(RngBitGeneratorTest, FloatAndSignedOutputsAreTheBitsOfTheirWidth) {
  // f32 and i32 [3, 2]: the u32 words above; bf16 and i16 [2, 3]: the u16 ones; f64 the u64
  // ones; i8 the u8 ones.
  const std::vector<uint64_t> words = {3933500718u, 721802571u, 3928695743u,
                                       741696269u,  957681320u, 1269266626u};
  ExpectVector({"f32[3,2]", "THREE_FRY", {kKey, 10}, E::kF32, {3, 2}, words, {kKey, 13}});
  ExpectVector({"i32[3,2]", "THREE_FRY", {kKey, 10}, E::kI32, {3, 2}, words, {kKey, 13}});
  const std::vector<uint64_t> halves = {29998u, 9151u, 3752u, 54603u, 25357u, 30914u};
  ExpectVector({"bf16[2,3]", "THREE_FRY", {kKey, 10}, E::kBF16, {2, 3}, halves, {kKey, 13}});
  ExpectVector({"f16[2,3]", "THREE_FRY", {kKey, 10}, E::kF16, {2, 3}, halves, {kKey, 13}});
  ExpectVector({"i16[2,3]", "THREE_FRY", {kKey, 10}, E::kI16, {2, 3}, halves, {kKey, 13}});
  ExpectVector({"i8[3]", "THREE_FRY", {kKey, 10}, E::kI8, {3}, {46u, 75u, 191u}, {kKey, 12}});
  ExpectVector({"f64[]", "THREE_FRY", {3, 3}, E::kF64, {}, {3349939604322698703u}, {3, 4}});
  // The f64 element is the double with those bits (a bitcast, not a conversion of the integer).
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> results,
                       Generate("THREE_FRY", {3, 3}, E::kF64, {}));
  double value = 0;
  std::memcpy(&value, results[1].data(), sizeof(value));
  uint64_t expected_bits = 3349939604322698703u;
  double expected = 0;
  std::memcpy(&expected, &expected_bits, sizeof(expected));
  EXPECT_EQ(value, expected);
}

TEST(RngBitGeneratorTest, EmptyOutputsAdvanceByTheBlocksOfTheirShape) {
  ExpectVector({"THREE_FRY u64[0]", "THREE_FRY", {kKey, 10}, E::kU64, {0}, {}, {kKey, 10}});
  ExpectVector({"THREE_FRY u32[3,0]", "THREE_FRY", {kKey, 10}, E::kU32, {3, 0}, {}, {kKey, 10}});
  ExpectVector({"PHILOX u32[0,5]", "PHILOX", {kKey, 5, 9}, E::kU32, {0, 5}, {}, {kKey, 5, 9}});
}

}  // namespace
}  // namespace accy::reference_test
