// Error paths of the StableHLO parser: every must-fail input asserts the status code and the
// "line:column: ..." message (what was expected, what was found, or the unsupported feature by
// name).
#include <string>

#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct ErrorCase {
  const char* name;
  std::string text;
  absl::StatusCode code;
  const char* message_start;  // the message starts with this
  const char* fragment;       // and contains this
};

// One function `@f(%a: tensor<4xf32>) -> tensor<4xf32>` whose body is `body` (line 2 onwards).
std::string Function(const std::string& body) {
  return "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n" + body + "}\n";
}

TEST(ErrorTest, MalformedAndUnsupportedInputsNameLineColumnAndCause) {
  using Code = absl::StatusCode;
  const ErrorCase cases[] = {
      {"truncated module", "module {", Code::kInvalidArgument, "1:9: expected '}'",
       "found end of input"},
      {"truncated function", "func.func @f(%a: tensor<4xf32>", Code::kInvalidArgument,
       "1:31: ", "found end of input"},
      {"missing result type",
       Function("  %0 = stablehlo.add %a, %a :\n  return %0 : tensor<4xf32>\n"),
       Code::kInvalidArgument, "3:3: expected a type", "found 'return'"},
      {"unterminated string", "module @\"abc", Code::kInvalidArgument,
       "1:9: ", "unterminated string literal"},
      {"bad character", Function("  %0 = stablehlo.add %a, %a : tensor<4xf32> ~\n"),
       Code::kInvalidArgument, "2:45: ", "unexpected character '~'"},
      {"unknown op", Function("  %0 = stablehlo.fft %a : tensor<4xf32>\n"), Code::kUnimplemented,
       "2:8: ", "op 'stablehlo.fft' is not supported"},
      {"unknown generic op",
       Function("  %0 = \"stablehlo.fft\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"),
       Code::kUnimplemented, "2:8: ", "op 'stablehlo.fft' is not supported"},
      {"sort in pretty form (StableHLO has only the generic one)",
       Function("  %0 = stablehlo.sort %a : tensor<4xf32>\n"), Code::kUnimplemented, "2:8: ",
       "op 'stablehlo.sort' is not supported in pretty form: write it in the generic form "
       "(\"stablehlo.sort\"(operands) ... : functional type), as StableHLO prints it"},
      {"cumsum under its own name (accy writes it as a custom_call)",
       Function("  %0 = stablehlo.cumsum %a : tensor<4xf32>\n"), Code::kUnimplemented, "2:8: ",
       "op 'stablehlo.cumsum' is not supported: it is accy's own op, written (and printed) as a "
       "stablehlo.custom_call"},
      {"all_reduce in pretty form", Function("  %0 = stablehlo.all_reduce %a : tensor<4xf32>\n"),
       Code::kUnimplemented, "2:8: ", "op 'stablehlo.all_reduce' is not supported in pretty form"},
      {"unknown chlo op",
       Function("  %0 = chlo.broadcast_polygamma %a, %a : (tensor<4xf32>, tensor<4xf32>) -> "
                "tensor<4xf32>\n"),
       Code::kUnimplemented, "2:8: ", "op 'chlo.broadcast_polygamma' is not supported"},
      {"chlo op on integers",
       "func.func @f(%a: tensor<4xi32>) -> tensor<4xi32> {\n  %0 = chlo.erf %a : tensor<4xi32> -> "
       "tensor<4xi32>\n  return %0 : tensor<4xi32>\n}\n",
       Code::kInvalidArgument, "2:8: chlo.erf: ", "expected a floating-point element type"},
      {"reduce_precision without format",
       Function("  %0 = stablehlo.reduce_precision %a : tensor<4xf32>\n"), Code::kInvalidArgument,
       "2:38: ", "expected 'format = e<exponent bits>m<mantissa bits>'"},
      {"reduce_precision bad format",
       Function("  %0 = stablehlo.reduce_precision %a, format = f5m10 : tensor<4xf32>\n"),
       Code::kInvalidArgument, "2:48: ", "a format e<exponent bits>m<mantissa bits> such as e5m10"},
      {"reduce_precision zero exponent",
       Function("  %0 = stablehlo.reduce_precision %a, format = e0m10 : tensor<4xf32>\n  return %0 "
                ": tensor<4xf32>\n"),
       Code::kInvalidArgument, "2:8: reduce_precision: ", "exponent_bits is 0, expected 1 to 64"},
      {"complex type", "func.func @f(%a: tensor<2xcomplex<f32>>) {\n  return\n}\n",
       Code::kUnimplemented, "1:18: ", "complex"},
      {"f8 type", "func.func @f(%a: tensor<2xf8E4M3FN>) {\n  return\n}\n", Code::kUnimplemented,
       "1:18: ", "f8"},
      {"quantized type", "func.func @f(%a: tensor<2x!quant.uniform<i8:f32, 0.1>>) {\n  return\n}\n",
       Code::kUnimplemented, "1:18: ", "quantized"},
      {"dynamic shape", "func.func @f(%a: tensor<?xf32>) {\n  return\n}\n", Code::kUnimplemented,
       "1:18: ", "dynamic dimensions"},
      {"token type", "func.func @f(%a: !stablehlo.token) {\n  return\n}\n", Code::kUnimplemented,
       "1:18: ",
       "'!stablehlo.token' is not supported: accy has no token values (the ops that "
       "order effects through them: send, recv, after_all, infeed, outfeed)"},
      {"verifier type rule",
       Function("  %0 = stablehlo.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<3xf32>\n"
                "  return %0 : tensor<4xf32>\n"),
       Code::kInvalidArgument, "2:8: add: ", "tensor<3xf32>"},
      {"operand type mismatch",
       Function("  %0 = stablehlo.negate %a : tensor<3xf32>\n  return %0 : tensor<4xf32>\n"),
       Code::kInvalidArgument, "2:25: %a has type tensor<4xf32>", "expects tensor<3xf32>"},
      {"undefined value", Function("  return %x : tensor<4xf32>\n"), Code::kInvalidArgument,
       "2:10: use of undefined value %x", ""},
      {"redefinition",
       Function("  %0 = stablehlo.negate %a : tensor<4xf32>\n"
                "  %0 = stablehlo.negate %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n"),
       Code::kInvalidArgument, "3:8: redefinition of %0", ""},
      {"missing return", Function("  %0 = stablehlo.negate %a : tensor<4xf32>\n"),
       Code::kInvalidArgument, "2:8: block does not end with a return", ""},
      {"wrong return type",
       Function("  %0 = stablehlo.constant dense<1> : tensor<i32>\n"
                "  return %0 : tensor<i32>\n"),
       Code::kInvalidArgument, "3:3: ", "return"},
      {"dense count mismatch",
       Function("  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<4xf32>\n"
                "  return %0 : tensor<4xf32>\n"),
       Code::kInvalidArgument, "2:33: expected 4 elements for dim 0", "found 2"},
      {"integer out of range",
       Function("  %0 = stablehlo.constant dense<300> : tensor<i8>\n  return %a : tensor<4xf32>\n"),
       Code::kInvalidArgument, "2:33: integer 300 does not fit i8", ""},
      {"hex payload size",
       Function("  %0 = stablehlo.constant dense<\"0x0102\"> : tensor<3xi8>\n"
                "  return %a : tensor<4xf32>\n"),
       Code::kInvalidArgument, "2:33: hex payload of 2 bytes", "tensor<3xi8>"},
      {"unknown callee",
       Function("  %0 = call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
                "  return %0 : tensor<4xf32>\n"),
       Code::kInvalidArgument, "2:13: call to undefined function @g", ""},
      {"recursive call",
       Function("  %0 = call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
                "  return %0 : tensor<4xf32>\n"),
       Code::kUnimplemented, "2:8: recursive call to @f", ""},
      {"unknown custom_call",
       Function("  %0 = stablehlo.custom_call @xla_python_cpu_callback(%a) : (tensor<4xf32>) -> "
                "tensor<4xf32>\n"
                "  return %0 : tensor<4xf32>\n"),
       Code::kUnimplemented, "2:30: custom_call target @xla_python_cpu_callback is not supported",
       ""},
      {"unknown attribute",
       Function("  %0 = \"stablehlo.negate\"(%a) {foo = 1} : (tensor<4xf32>) -> tensor<4xf32>\n"
                "  return %0 : tensor<4xf32>\n"),
       Code::kUnimplemented, "2:38: attribute foo of stablehlo.negate is not supported", ""},
      {"two modules", "module {\n}\nmodule {\n}\n", Code::kInvalidArgument, "3:1: expected end",
       "found 'module'"},
      {"several blocks", Function("  return %a : tensor<4xf32>\n^bb1:\n"), Code::kUnimplemented,
       "3:1: regions with several blocks are not supported", ""},
      // Said "top-level op 'func.func' is not supported (expected func.func)" (break-it review).
      {"generic func.func",
       "\"func.func\"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = \"main\"}> "
       "({\n^bb0(%arg0: tensor<4xf32>):\n  \"func.return\"(%arg0) : (tensor<4xf32>) -> ()\n}) : () "
       "-> ()\n",
       Code::kUnimplemented, "1:1: the generic form of 'func.func'",
       "print the module in MLIR's custom form"},
      {"generic top-level op", "\"foo.bar\"() : () -> ()\n", Code::kUnimplemented,
       "1:1: top-level op 'foo.bar' is not supported (expected func.func)", ""},
  };
  for (const ErrorCase& c : cases) {
    StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(c.text);
    ASSERT_FALSE(module.ok()) << c.name;
    EXPECT_EQ(module.status().code(), c.code) << c.name << ": " << module.status();
    EXPECT_THAT(std::string(module.status().message()), StartsWith(c.message_start)) << c.name;
    EXPECT_THAT(std::string(module.status().message()), HasSubstr(c.fragment)) << c.name;
  }
}

TEST(ErrorTest, ErrorsInsideRegionsKeepTheirOwnLocation) {
  const std::string text = R"mlir(func.func @f(%x: tensor<4xf32>, %i: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.reduce(%x init: %i) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>)  {
    %1 = stablehlo.add %a, %undefined : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }
  return %0 : tensor<f32>
})mlir";
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().message(), "4:28: use of undefined value %undefined");
}

TEST(ErrorTest, SplitFileErrorsCountLinesInTheWholeFile) {
  const std::string text =
      "func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  return %x\n}\n";
  StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseStableHloSplit(text);
  ASSERT_FALSE(modules.ok());
  EXPECT_THAT(std::string(modules.status().message()), StartsWith("7:1: expected ':' before the returned types, found '}'"));
}

TEST(ErrorTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep_list =
      Function("  %0 = stablehlo.constant dense<" + std::string(100000, '[') + "1" +
               std::string(100000, ']') + "> : tensor<f32>\n");
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(deep_list);
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(std::string(module.status().message()), HasSubstr("nesting deeper than"));
  std::string deep_dict = "module attributes ";
  for (int i = 0; i < 100000; ++i) deep_dict += "{a = ";
  module = ParseStableHlo(deep_dict);
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(std::string(module.status().message()), HasSubstr("nesting deeper than"));
}

// A chain of private functions, each calling the next: inlining nests one block per call, and
// past kMaxParseNesting levels (with the function's own body) the import is an error naming the
// limit, not a stack overflow (a 4,500-deep chain crashed the importer before 2026-12-07).
std::string CallChain(int depth) {
  std::string text =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = func.call @f0(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n";
  for (int i = 0; i < depth; ++i) {
    const std::string body =
        i + 1 < depth ? "func.call @f" + std::to_string(i + 1) + "(%a) : (tensor<4xf32>) -> "
                                                                 "tensor<4xf32>"
                      : "stablehlo.negate %a : tensor<4xf32>";
    text += "func.func private @f" + std::to_string(i) +
            "(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = " + body +
            "\n  return %0 : tensor<4xf32>\n}\n";
  }
  return text;
}

TEST(ErrorTest, DeepCallChainsAreAnErrorNotACrash) {
  // main's body and 255 inlined callees: 256 blocks deep.
  ASSERT_OK(ParseStableHlo(CallChain(kMaxParseNesting - 1)).status());
  for (int depth : {kMaxParseNesting, 5000}) {
    StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(CallChain(depth));
    ASSERT_FALSE(module.ok()) << depth;
    EXPECT_THAT(std::string(module.status().message()),
                HasSubstr("regions and inlined calls (func.call, composite decompositions) nest "
                          "deeper than 256 levels"));
  }
}

TEST(ErrorTest, HugeSplatIsRefusedBeforeAllocating) {
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(
      Function("  %0 = stablehlo.constant dense<1.0> : tensor<100000x100000x100xf32>\n"));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(module.status().message()), StartsWith("2:33: constant of"));
}

TEST(ErrorTest, ChecksInsideCalledFunctionsAreUnimplemented) {
  const std::string text = R"mlir(func.func @main() {
  %0 = call @g() : () -> tensor<i32>
  return
}
func.func private @g() -> tensor<i32> {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<1> : tensor<i32>
  return %0 : tensor<i32>
})mlir";
  StatusOr<StableHloProgram> program = ParseStableHloProgram(text);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(program.status().message()), StartsWith("7:3: check ops inside"));
  // Dropped checks are no problem.
  EXPECT_OK(ParseStableHlo(text).status());
}

// A dropped check (ParseStableHlo) still names values that exist: its operands are looked up.
TEST(ErrorTest, DroppedChecksOfUndefinedValuesAreErrors) {
  const std::string text = R"mlir(func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_eq %0, %undefined : tensor<2xf32>
  return %0 : tensor<2xf32>
})mlir";
  const Status status = ParseStableHlo(text).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), StartsWith("3:23: use of undefined value %undefined"));
}

}  // namespace
}  // namespace accy
