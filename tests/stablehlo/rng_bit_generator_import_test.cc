// Import and printing of rng_bit_generator: the pretty form (`%s, %o = stablehlo.rng_bit_generator
// %0, algorithm =  THREE_FRY : ...`, as the testdata files and stablehlo-opt write it), the
// generic form with attributes (`{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>}`, as the
// spec's example) and with properties (`<{...}>`), printing and round trips through PrintModule,
// and the errors of bad forms (a string or unknown algorithm, a pretty form without
// `algorithm =`, a state the type rule rejects, an unknown attribute).
#include <memory>
#include <string>

#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/stablehlo/import_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::accy::import_test::ExpectRoundTrip;
using ::accy::import_test::FirstOf;
using ::testing::HasSubstr;

// main(%state: `state`) returning both results of the op written as `op`.
std::string Program(const std::string& op, const std::string& state = "tensor<2xui64>",
                    const std::string& output = "tensor<3x2xui32>") {
  return "func.func @main(%state: " + state + ") -> (" + state + ", " + output + ") {\n  " + op +
         "\n  func.return %output_state, %output : " + state + ", " + output + "\n}\n";
}

TEST(RngBitGeneratorImportTest, PrettyFormParsesPrintsAndRoundTrips) {
  // testdata/rng_bit_generator_uint64_2.mlir's op, on a parameter.
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      ParseStableHlo(Program("%output_state, %output = stablehlo.rng_bit_generator %state, "
                             "algorithm =  THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, "
                             "tensor<ui64>)",
                             "tensor<2xui64>", "tensor<ui64>")));
  const Operation& op = FirstOf(*module, OpKind::kRngBitGenerator);
  EXPECT_EQ(op.GetString("rng_algorithm"), "THREE_FRY");
  ASSERT_EQ(op.num_results(), 2);
  EXPECT_EQ(op.result(0)->type().ToString(), "tensor<2xui64>");
  EXPECT_EQ(op.result(1)->type().ToString(), "tensor<ui64>");
  EXPECT_THAT(PrintModule(*module),
              HasSubstr("= stablehlo.rng_bit_generator %arg0, algorithm =  THREE_FRY : "
                        "(tensor<2xui64>) -> (tensor<2xui64>, tensor<ui64>)"));
  ExpectRoundTrip(*module);
  // The pretty form also takes the enum attribute itself.
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> enum_form,
      ParseStableHlo(Program("%output_state, %output = stablehlo.rng_bit_generator %state, "
                             "algorithm = #stablehlo<rng_algorithm PHILOX> : (tensor<3xui64>) -> "
                             "(tensor<3xui64>, tensor<3x2xui32>)",
                             "tensor<3xui64>")));
  EXPECT_EQ(FirstOf(*enum_form, OpKind::kRngBitGenerator).GetString("rng_algorithm"), "PHILOX");
  ExpectRoundTrip(*enum_form);
}

TEST(RngBitGeneratorImportTest, GenericAttributeAndPropertiesFormsParse) {
  // The spec's example form.
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> attributes,
      ParseStableHlo(Program("%output_state, %output = \"stablehlo.rng_bit_generator\"(%state) "
                             "{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>} : "
                             "(tensor<2xui64>) -> (tensor<2xui64>, tensor<3x2xui32>)")));
  EXPECT_EQ(FirstOf(*attributes, OpKind::kRngBitGenerator).GetString("rng_algorithm"),
            "DEFAULT");
  EXPECT_THAT(PrintModule(*attributes),
              HasSubstr("stablehlo.rng_bit_generator %arg0, algorithm =  DEFAULT : "
                        "(tensor<2xui64>) -> (tensor<2xui64>, tensor<3x2xui32>)"));
  ExpectRoundTrip(*attributes);
  // `%r:2 = ...` with properties, a float output.
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> properties,
      ParseStableHlo("func.func @main(%state: tensor<2xui64>) -> tensor<4xf32> {\n"
                     "  %r:2 = \"stablehlo.rng_bit_generator\"(%state) <{rng_algorithm = "
                     "#stablehlo<rng_algorithm PHILOX>}> : (tensor<2xui64>) -> (tensor<2xui64>, "
                     "tensor<4xf32>)\n  func.return %r#1 : tensor<4xf32>\n}\n"));
  const Operation& op = FirstOf(*properties, OpKind::kRngBitGenerator);
  EXPECT_EQ(op.GetString("rng_algorithm"), "PHILOX");
  EXPECT_EQ(op.result(1)->type().ToString(), "tensor<4xf32>");
  ExpectRoundTrip(*properties);
}

TEST(RngBitGeneratorImportTest, BadFormsFailNamingTheProblem) {
  const auto generic = [](const std::string& attributes, const std::string& state) {
    return ParseStableHlo(Program("%output_state, %output = \"stablehlo.rng_bit_generator\"("
                                  "%state) " + attributes + " : (" + state + ") -> (" + state +
                                  ", tensor<3x2xui32>)",
                                  state))
        .status();
  };
  const Status string = generic("{rng_algorithm = \"THREE_FRY\"}", "tensor<2xui64>");
  EXPECT_EQ(string.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(string.message(),
              HasSubstr("attribute rng_algorithm must be "
                        "#stablehlo<rng_algorithm DEFAULT|THREE_FRY|PHILOX>, found"));
  const Status unknown =
      generic("{rng_algorithm = #stablehlo<rng_algorithm MERSENNE>}", "tensor<2xui64>");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(),
              HasSubstr("rng_bit_generator: rng_algorithm is 'MERSENNE', expected DEFAULT, "
                        "THREE_FRY or PHILOX"));
  const Status missing = generic("", "tensor<2xui64>");
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("rng_bit_generator: missing attribute rng_algorithm"));
  const Status state_size =
      generic("{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>}", "tensor<3xui64>");
  EXPECT_EQ(state_size.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(state_size.message(),
              HasSubstr("rng_bit_generator: initial_state has type tensor<3xui64>, expected 2 "
                        "elements for THREE_FRY"));
  const Status other = generic(
      "{rng_algorithm = #stablehlo<rng_algorithm PHILOX>, seed = 3 : i64}", "tensor<2xui64>");
  EXPECT_EQ(other.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(other.message(),
              HasSubstr("attribute seed of stablehlo.rng_bit_generator is not supported"));
  const Status no_keyword = ParseStableHlo(Program(
      "%output_state, %output = stablehlo.rng_bit_generator %state, THREE_FRY : "
      "(tensor<2xui64>) -> (tensor<2xui64>, tensor<3x2xui32>)")).status();
  EXPECT_EQ(no_keyword.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_keyword.message(), HasSubstr("expected 'algorithm'"));
  const Status no_word = ParseStableHlo(Program(
      "%output_state, %output = stablehlo.rng_bit_generator %state, algorithm = : "
      "(tensor<2xui64>) -> (tensor<2xui64>, tensor<3x2xui32>)")).status();
  EXPECT_EQ(no_word.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_word.message(), HasSubstr("expected an algorithm (DEFAULT, THREE_FRY, PHILOX)"));
}

}  // namespace
}  // namespace accy
