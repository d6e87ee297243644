// Import and printing of the LAPACK custom_calls JAX's CPU lowering emits
// (src/stablehlo/lapack_mapping.h): potrf becomes a lapack op, trsm a triangular_solve (with and
// without the pre-2025 alpha operand); the printed custom_call and round trips; and the errors of
// forms accy does not bind (complex, unbound and pre-FFI targets, other layouts) or that are
// malformed (backend_config fields, attributes, types), each asserting its code and message.
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

using ::testing::HasSubstr;

using ::accy::import_test::ExpectRoundTrip;
using ::accy::import_test::FirstOf;

// main(a: tensor<TYPE>) -> the custom_call @TARGET's results, with ATTRS as the attribute
// dictionary; RESULTS is the result type list.
std::string PotrfProgram(const std::string& target, const std::string& type,
                         const std::string& info, const std::string& attrs) {
  return "func.func @main(%a: tensor<" + type + ">) -> (tensor<" + type + ">, tensor<" + info +
         ">) {\n  %0:2 = stablehlo.custom_call @" + target + "(%a) {" + attrs +
         "} : (tensor<" + type + ">) -> (tensor<" + type + ">, tensor<" + info +
         ">)\n  func.return %0#0, %0#1 : tensor<" + type + ">, tensor<" + info + ">\n}\n";
}

// JAX's attributes for an unbatched potrf (cpu_cholesky_lapack_potrf.py, 2024-05-31).
const char kPotrfAttrs[] =
    "mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : "
    "tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<"
    "output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], "
    "result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]";

// The same for a [2, 3] batch of matrices.
const char kBatchedPotrfAttrs[] =
    "mhlo.backend_config = {uplo = 85 : ui8}, operand_layouts = [dense<[2, 3, 1, 0]> : "
    "tensor<4xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<"
    "output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], "
    "result_layouts = [dense<[2, 3, 1, 0]> : tensor<4xindex>, dense<[1, 0]> : tensor<2xindex>]";

TEST(LapackImportTest, JaxPotrfBecomesALapackOpAndRoundTrips) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseStableHlo(PotrfProgram("lapack_spotrf_ffi", "4x4xf32", "i32",
                                                   kPotrfAttrs)));
  const Operation& op = FirstOf(*module, OpKind::kLapack);
  EXPECT_EQ(op.GetString("call_target_name"), "lapack_spotrf_ffi");
  EXPECT_EQ(op.GetInt("uplo"), 'L');
  ASSERT_EQ(op.num_results(), 2);
  EXPECT_EQ(op.result(1)->type().ToString(), "tensor<i32>");
  EXPECT_THAT(PrintModule(*module),
              HasSubstr("stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {mhlo.backend_config = "
                        "{uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : "
                        "tensor<2xindex>], output_operand_aliases = "
                        "[#stablehlo.output_operand_alias<output_tuple_indices = [0], "
                        "operand_index = 0, operand_tuple_indices = []>], result_layouts = "
                        "[dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : "
                        "(tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<i32>)"));
  ExpectRoundTrip(*module);
}

TEST(LapackImportTest, BatchedUpperPotrfReadsBatchLayoutsAndRoundTrips) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseStableHlo(PotrfProgram("lapack_dpotrf_ffi", "2x3x5x5xf64", "2x3xi32",
                                                   kBatchedPotrfAttrs)));
  const Operation& op = FirstOf(*module, OpKind::kLapack);
  EXPECT_EQ(op.GetString("call_target_name"), "lapack_dpotrf_ffi");
  EXPECT_EQ(op.GetInt("uplo"), 'U');
  EXPECT_THAT(PrintModule(*module), HasSubstr("result_layouts = [dense<[2, 3, 1, 0]> : "
                                              "tensor<4xindex>, dense<[1, 0]> : tensor<2xindex>]"));
  ExpectRoundTrip(*module);
}

TEST(LapackImportTest, JaxGetrfBecomesALapackOpWithPivotsAndRoundTrips) {
  // cpu_lu_lapack_getrf.py (2024-05-31): an empty backend_config and a row-major pivots layout.
  const std::string text = R"mlir(
func.func @main(%a: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3xi32>, tensor<2xi32>) {
  %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3xi32>, tensor<2xi32>)
  func.return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<2x3xi32>, tensor<2xi32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOf(*module, OpKind::kLapack);
  EXPECT_EQ(op.GetString("call_target_name"), "lapack_sgetrf_ffi");
  ASSERT_EQ(op.num_results(), 3);
  EXPECT_THAT(PrintModule(*module),
              HasSubstr("stablehlo.custom_call @lapack_sgetrf_ffi(%arg0) {mhlo.backend_config = "
                        "{}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]"));
  ExpectRoundTrip(*module);
  // pivots of the wrong shape.
  std::string bad = text;
  for (size_t at = bad.find("2x3xi32"); at != std::string::npos; at = bad.find("2x3xi32", at)) {
    bad.replace(at, 7, "2x4xi32");
  }
  StatusOr<std::unique_ptr<Module>> rejected = ParseStableHlo(bad);
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rejected.status().message()),
              HasSubstr("lapack @lapack_sgetrf_ffi: pivots has type tensor<2x4xi32>, expected "
                        "tensor<2x3xi32> (i32 over a's batch dims and min(M, N))"));
}

TEST(LapackImportTest, JaxQrBecomesGeqrfAndOrgqrAndRoundTrips) {
  // cpu_qr_lapack_geqrf.py (2025-04-02), on a parameter; orgqr's single result aliases with
  // output_tuple_indices = [].
  const std::string text = R"mlir(
func.func @main(%a: tensor<4x3xf64>) -> tensor<4x3xf64> {
  %0:2 = stablehlo.custom_call @lapack_dgeqrf_ffi(%a) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>)
  %1 = stablehlo.custom_call @lapack_dorgqr_ffi(%0#0, %0#1) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4x3xf64>
  func.return %1 : tensor<4x3xf64>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("stablehlo.custom_call @lapack_dgeqrf_ffi(%arg0)"));
  EXPECT_THAT(printed, HasSubstr("output_operand_aliases = [#stablehlo.output_operand_alias<"
                                 "output_tuple_indices = [], operand_index = 0, "
                                 "operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> "
                                 ": tensor<2xindex>]} : (tensor<4x3xf64>, tensor<3xf64>) -> "
                                 "tensor<4x3xf64>"));
  ExpectRoundTrip(*module);
  // orgqr's K above N.
  StatusOr<std::unique_ptr<Module>> wide_tau = ParseStableHlo(R"mlir(
func.func @main(%a: tensor<4x2xf32>, %tau: tensor<3xf32>) -> tensor<4x2xf32> {
  %1 = stablehlo.custom_call @lapack_sorgqr_ffi(%a, %tau) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<4x2xf32>, tensor<3xf32>) -> tensor<4x2xf32>
  func.return %1 : tensor<4x2xf32>
}
)mlir");
  ASSERT_FALSE(wide_tau.ok());
  EXPECT_EQ(wide_tau.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wide_tau.status().message()),
              HasSubstr("lapack @lapack_sorgqr_ffi: a is 4 x 2 with K = 3 reflectors; xORGQR "
                        "needs M >= N >= K"));
}

TEST(LapackImportTest, JaxSyevdRoundTripsAndChecksMode) {
  const std::string text = R"mlir(
func.func @main(%a: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>, tensor<i32>)
  func.return %0#0, %0#1, %0#2 : tensor<8x8xf32>, tensor<8xf32>, tensor<i32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOf(*module, OpKind::kLapack);
  EXPECT_EQ(op.GetInt("mode"), 'V');
  EXPECT_EQ(op.GetInt("uplo"), 'L');
  EXPECT_THAT(PrintModule(*module),
              HasSubstr("@lapack_ssyevd_ffi(%arg0) {mhlo.backend_config = {mode = 86 : ui8, "
                        "uplo = 76 : ui8}"));
  ExpectRoundTrip(*module);
  std::string bad = text;
  bad.replace(bad.find("mode = 86"), 9, "mode = 65");
  StatusOr<std::unique_ptr<Module>> rejected = ParseStableHlo(bad);
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rejected.status().message()),
              HasSubstr("backend_config field mode is not a character lapack_ssyevd_ffi "
                        "accepts"));
}

TEST(LapackImportTest, TrsmBecomesTriangularSolveWithAndWithoutAlpha) {
  // cpu_triangular_solve_blas_trsm.py: the 2025 form (no alpha) and the 2024 one (alpha 1.0).
  const std::string current = R"mlir(
func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = stablehlo.custom_call @lapack_strsm_ffi(%a, %b) {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<4x4xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(current));
  const Operation& solve = FirstOf(*module, OpKind::kTriangularSolve);
  EXPECT_EQ(solve.GetBool("left_side"), true);
  EXPECT_EQ(solve.GetBool("lower"), false);
  EXPECT_EQ(solve.GetBool("unit_diagonal"), false);
  EXPECT_EQ(solve.GetString("transpose_a"), "TRANSPOSE");
  EXPECT_EQ(solve.operand(1), module->functions().front()->entry_block()->argument(1));

  const std::string with_alpha = R"mlir(
func.func @main(%a: tensor<2x3x3xf64>, %b: tensor<2x4x3xf64>) -> tensor<2x4x3xf64> {
  %cst = stablehlo.constant dense<2.000000e+00> : tensor<f64>
  %0 = stablehlo.custom_call @lapack_dtrsm_ffi(%a, %b, %cst) {mhlo.backend_config = {diag = 85 : ui8, side = 82 : ui8, trans_x = 67 : ui8, uplo = 76 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<> : tensor<0xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]} : (tensor<2x3x3xf64>, tensor<2x4x3xf64>, tensor<f64>) -> tensor<2x4x3xf64>
  func.return %0 : tensor<2x4x3xf64>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> scaled, ParseStableHlo(with_alpha));
  const Operation& scaled_solve = FirstOf(*scaled, OpKind::kTriangularSolve);
  EXPECT_EQ(scaled_solve.GetBool("left_side"), false);
  EXPECT_EQ(scaled_solve.GetBool("lower"), true);
  EXPECT_EQ(scaled_solve.GetBool("unit_diagonal"), true);
  EXPECT_EQ(scaled_solve.GetString("transpose_a"), "ADJOINT");
  // b is alpha * b.
  ASSERT_NE(scaled_solve.operand(1)->defining_op(), nullptr);
  EXPECT_EQ(scaled_solve.operand(1)->defining_op()->kind(), OpKind::kMultiply);
}

// Parses `text` and expects it to fail with `code` and a message containing `fragment`.
void ExpectImportError(const std::string& text, absl::StatusCode code,
                       const std::string& fragment) {
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
  ASSERT_FALSE(module.ok()) << text;
  EXPECT_EQ(module.status().code(), code) << module.status();
  EXPECT_THAT(std::string(module.status().message()), HasSubstr(fragment));
}

TEST(LapackImportTest, ComplexTargetsAreUnimplementedNamingTheTarget) {
  ExpectImportError(PotrfProgram("lapack_cpotrf_ffi", "4x4xf32", "i32", kPotrfAttrs),
                    absl::StatusCode::kUnimplemented,
                    "custom_call target @lapack_cpotrf_ffi is not supported: complex element "
                    "types (c, z) have no accy type");
  ExpectImportError(PotrfProgram("lapack_ztrsm_ffi", "4x4xf64", "i32", kPotrfAttrs),
                    absl::StatusCode::kUnimplemented, "@lapack_ztrsm_ffi is not supported");
}

TEST(LapackImportTest, UnboundRoutinesAreUnimplementedNamingTheTarget) {
  // gesdd (SVD) and anything else under lapack_.
  for (const char* target : {"lapack_sgesdd_ffi", "lapack_dgesdd_ffi", "lapack_sgeev_ffi",
                             "lapack_dgesvd_ffi", "lapack_sgees_ffi"}) {
    ExpectImportError(PotrfProgram(target, "4x4xf32", "i32", kPotrfAttrs),
                      absl::StatusCode::kUnimplemented,
                      std::string("custom_call target @") + target + " is not supported: LAPACK "
                      "routine '");
  }
  ExpectImportError(PotrfProgram("lapack_sgesdd_ffi", "4x4xf32", "i32", kPotrfAttrs),
                    absl::StatusCode::kUnimplemented,
                    "routine 'gesdd' is not bound (accy binds lapack_{s,d}potrf_ffi, "
                    "lapack_{s,d}trsm_ffi, lapack_{s,d}getrf_ffi, lapack_{s,d}geqrf_ffi, "
                    "lapack_{s,d}orgqr_ffi, lapack_{s,d}syevd_ffi)");
}

TEST(LapackImportTest, PreFfiTargetsAreUnimplemented) {
  ExpectImportError(PotrfProgram("lapack_spotrf", "4x4xf32", "i32", kPotrfAttrs),
                    absl::StatusCode::kUnimplemented,
                    "@lapack_spotrf is not supported: the pre-FFI form (custom_call api_version "
                    "2");
}

TEST(LapackImportTest, OtherCustomCallTargetsStayUnimplemented) {
  ExpectImportError(PotrfProgram("cu_cholesky", "4x4xf32", "i32", kPotrfAttrs),
                    absl::StatusCode::kUnimplemented,
                    "custom_call target @cu_cholesky is not supported");
}

TEST(LapackImportTest, LayoutsOtherThanJaxsAreUnimplemented) {
  std::string row_major = kPotrfAttrs;
  row_major.replace(row_major.find("operand_layouts = [dense<[0, 1]>"),
                    std::string("operand_layouts = [dense<[0, 1]>").size(),
                    "operand_layouts = [dense<[1, 0]>");
  ExpectImportError(PotrfProgram("lapack_spotrf_ffi", "4x4xf32", "i32", row_major),
                    absl::StatusCode::kUnimplemented,
                    "custom_call @lapack_spotrf_ffi: operand_layouts 0 is [1, 0], accy binds "
                    "[0, 1] (column-major matrices, as JAX writes it)");
  ExpectImportError(PotrfProgram("lapack_spotrf_ffi", "4x4xf32", "i32",
                                 "mhlo.backend_config = {uplo = 76 : ui8}"),
                    absl::StatusCode::kUnimplemented,
                    "custom_call @lapack_spotrf_ffi: missing operand_layouts");
  ExpectImportError(
      PotrfProgram("lapack_spotrf_ffi", "4x4xf32", "i32",
                   "mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : "
                   "tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]"),
      absl::StatusCode::kInvalidArgument,
      "custom_call @lapack_spotrf_ffi: result_layouts needs 2 layouts, one per result");
}

TEST(LapackImportTest, BadBackendConfigAndAttributesAreInvalid) {
  std::string no_uplo = kPotrfAttrs;
  no_uplo.replace(no_uplo.find("uplo = 76 : ui8"), 15, "");
  ExpectImportError(PotrfProgram("lapack_spotrf_ffi", "4x4xf32", "i32", no_uplo),
                    absl::StatusCode::kInvalidArgument,
                    "custom_call @lapack_spotrf_ffi: mhlo.backend_config needs the field uplo "
                    "(a ui8 character code)");
  std::string bad_uplo = kPotrfAttrs;
  bad_uplo.replace(bad_uplo.find("uplo = 76"), 9, "uplo = 88");
  ExpectImportError(PotrfProgram("lapack_spotrf_ffi", "4x4xf32", "i32", bad_uplo),
                    absl::StatusCode::kInvalidArgument,
                    "backend_config field uplo is not a character lapack_spotrf_ffi accepts");
  ExpectImportError(PotrfProgram("lapack_spotrf_ffi", "4x4xf32", "i32",
                                 std::string(kPotrfAttrs) + ", lower = true"),
                    absl::StatusCode::kInvalidArgument,
                    "custom_call @lapack_spotrf_ffi: attribute 'lower' is not one JAX writes for "
                    "LAPACK targets");
}

TEST(LapackImportTest, TypesTheRoutineRejectsAreInvalid) {
  ExpectImportError(PotrfProgram("lapack_spotrf_ffi", "4x4xf64", "i32", kPotrfAttrs),
                    absl::StatusCode::kInvalidArgument,
                    "lapack @lapack_spotrf_ffi: a has type tensor<4x4xf64>, expected element "
                    "type f32 (the target's prefix)");
  ExpectImportError(PotrfProgram("lapack_spotrf_ffi", "4x3xf32", "i32", kPotrfAttrs),
                    absl::StatusCode::kInvalidArgument,
                    "lapack @lapack_spotrf_ffi: a has type tensor<4x3xf32>, expected square "
                    "matrices");
  ExpectImportError(PotrfProgram("lapack_spotrf_ffi", "4x4xf32", "i64", kPotrfAttrs),
                    absl::StatusCode::kInvalidArgument,
                    "lapack @lapack_spotrf_ffi: info has type tensor<i64>, expected tensor<i32> "
                    "(i32 over a's batch dims)");
}

}  // namespace
}  // namespace accy
