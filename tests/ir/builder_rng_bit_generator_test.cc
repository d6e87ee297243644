// Builder and verifier tests for rng_bit_generator (StableHLO spec "rng_bit_generator"): the
// result types and stored attribute of valid ops (every algorithm, state size and output element
// class, scalar and empty outputs), and one must-fail case per rule ((I1) the algorithm, (I2) the
// state's rank and element type, (C1) output_state's type, (C2) the state size per algorithm,
// an i1 output, the operand and result counts of the generic path) and per attribute (missing,
// of the wrong kind), each checked for code, message and an unchanged block.
#include <cstdint>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ir/builder_test_util.h"
#include "tests/test_util.h"

namespace accy::ir_test {
namespace {

using RngBitGeneratorBuilderTest = BuilderTest;

std::vector<NamedAttribute> Algorithm(const std::string& algorithm) {
  return {{"rng_algorithm", algorithm}};
}

TEST_F(RngBitGeneratorBuilderTest, ResultsAreTheStateTypeAndTheGivenOutputType) {
  FunctionBuilder f = Begin({T(kU64, {2}), T(kU64, {3})});
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> three_fry,
                       f.RngBitGenerator(f.Parameter(0), "THREE_FRY", T(kU32, {3, 3})));
  ASSERT_EQ(three_fry.size(), 2u);
  EXPECT_EQ(three_fry[0]->type(), T(kU64, {2}));
  EXPECT_EQ(three_fry[1]->type(), T(kU32, {3, 3}));
  const Operation* op = three_fry[0]->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kRngBitGenerator);
  EXPECT_EQ(op->name(), "rng_bit_generator");
  EXPECT_EQ(op->GetString("rng_algorithm"), "THREE_FRY");
  EXPECT_EQ(three_fry[1]->defining_op(), op);
  // PHILOX and DEFAULT take 2 or 3 words; any integer or float output, scalar or empty.
  for (const std::string algorithm : {"PHILOX", "DEFAULT"}) {
    for (int64_t p : {0, 1}) {
      for (const TensorType& output : {T(kF32, {4}), T(kBF16, {2, 0}), T(kI8, {}),
                                       T(kU64, {7, 1, 3}), T(kF64, {1}), T(kI64, {5})}) {
        ASSERT_OK_AND_ASSIGN(std::vector<Value*> results,
                             f.RngBitGenerator(f.Parameter(p), algorithm, output));
        EXPECT_EQ(results[0]->type(), f.Parameter(p)->type());
        EXPECT_EQ(results[1]->type(), output);
        EXPECT_EQ(results[0]->defining_op()->GetString("rng_algorithm"), algorithm);
      }
    }
  }
}

TEST_F(RngBitGeneratorBuilderTest, RejectsEveryBrokenConstraint) {
  FunctionBuilder f = Begin({T(kU64, {2}), T(kU64, {3}), T(kU64, {1}), T(kU32, {4}),
                             T(kU64, {2, 1}), T(kU64, {}), T(kU64, {4}), T(kI64, {2})});
  Value* two = f.Parameter(0);
  Value* three = f.Parameter(1);
  // (I1) rng_algorithm is an enum of DEFAULT, THREE_FRY and PHILOX.
  EXPECT_REJECTED(f, f.RngBitGenerator(two, "MERSENNE", T(kU32, {4})),
                  "rng_bit_generator: rng_algorithm is 'MERSENNE', expected DEFAULT, THREE_FRY "
                  "or PHILOX");
  EXPECT_REJECTED(f, f.RngBitGenerator(two, "three_fry", T(kU32, {4})),
                  "rng_algorithm is 'three_fry'");
  // (I2) initial_state: a 1-dimensional tensor of ui64.
  EXPECT_REJECTED(f, f.RngBitGenerator(f.Parameter(3), "PHILOX", T(kU32, {4})),
                  "rng_bit_generator: initial_state has type tensor<4xui32>, expected a "
                  "1-dimensional tensor of ui64");
  EXPECT_REJECTED(f, f.RngBitGenerator(f.Parameter(7), "THREE_FRY", T(kU32, {4})),
                  "initial_state has type tensor<2xi64>, expected a 1-dimensional tensor of ui64");
  EXPECT_REJECTED(f, f.RngBitGenerator(f.Parameter(4), "THREE_FRY", T(kU32, {4})),
                  "initial_state has type tensor<2x1xui64>, expected a 1-dimensional tensor");
  EXPECT_REJECTED(f, f.RngBitGenerator(f.Parameter(5), "THREE_FRY", T(kU32, {4})),
                  "initial_state has type tensor<ui64>, expected a 1-dimensional tensor");
  // (C2) size(initial_state): 2 for THREE_FRY; 2 or 3 for PHILOX, and for DEFAULT in accy.
  EXPECT_REJECTED(f, f.RngBitGenerator(three, "THREE_FRY", T(kU32, {4})),
                  "rng_bit_generator: initial_state has type tensor<3xui64>, expected 2 elements "
                  "for THREE_FRY");
  EXPECT_REJECTED(f, f.RngBitGenerator(f.Parameter(2), "PHILOX", T(kU32, {4})),
                  "rng_bit_generator: initial_state has type tensor<1xui64>, expected 2 or 3 "
                  "elements for PHILOX");
  EXPECT_REJECTED(f, f.RngBitGenerator(f.Parameter(6), "DEFAULT", T(kU32, {4})),
                  "rng_bit_generator: initial_state has type tensor<4xui64>, expected 2 or 3 "
                  "elements for DEFAULT (PHILOX in accy)");
  // output: integer or floating-point (i1 is neither).
  EXPECT_REJECTED(f, f.RngBitGenerator(two, "THREE_FRY", T(kI1, {4})),
                  "rng_bit_generator: output has type tensor<4xi1>, expected an integer or "
                  "floating-point element type");
  // (C1) type(output_state) = type(initial_state): the generic path (the importer's).
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kRngBitGenerator, {two}, {T(kU64, {3}), T(kU32, {4})},
                                Algorithm("PHILOX")),
                  "rng_bit_generator: output_state has type tensor<3xui64>, expected "
                  "tensor<2xui64> (the type of initial_state)");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kRngBitGenerator, {two}, {T(kU64, {2})},
                                Algorithm("PHILOX")),
                  "rng_bit_generator: expected 1 operand (initial_state) and 2 results "
                  "(output_state, output), got 1 and 1");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kRngBitGenerator, {two, three},
                                {T(kU64, {2}), T(kU32, {4})}, Algorithm("PHILOX")),
                  "got 2 and 2");
}

TEST_F(RngBitGeneratorBuilderTest, RejectsMissingAndMistypedAlgorithm) {
  FunctionBuilder f = Begin({T(kU64, {2})});
  Value* state = f.Parameter(0);
  const std::vector<TensorType> results = {T(kU64, {2}), T(kF32, {8})};
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kRngBitGenerator, {state}, results, {}),
                  "rng_bit_generator: missing attribute rng_algorithm");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kRngBitGenerator, {state}, results,
                                {{"rng_algorithm", int64_t{1}}}),
                  "rng_bit_generator: attribute rng_algorithm has the wrong kind: expected a "
                  "string, got an integer");
  // The complete attribute through the same path is accepted.
  ASSERT_OK(f.CreateOp(OpKind::kRngBitGenerator, {state}, results, Algorithm("THREE_FRY"))
                .status());
}

}  // namespace
}  // namespace accy::ir_test
