// Import and printing of the LAPACK custom_calls JAX's CPU lowering emits
// (src/stablehlo/lapack_mapping.h): potrf becomes a lapack op, trsm a triangular_solve (with and
// without the pre-2025 alpha operand); the printed custom_call and round trips; and the errors of
// forms accy does not bind (complex, unbound and pre-FFI targets, other layouts) or that are
// malformed (backend_config fields, attributes, types), each asserting its code and message.
// gesdd: JAX's form for f32 / f64, unbatched and batched, square, tall and wide, every mode
// (full_matrices x compute_uv), and its mode, shape, type and layout errors.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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
  // gesvd (SVD by QR iteration), geev and anything else under lapack_.
  for (const char* target : {"lapack_sgesvd_ffi", "lapack_dgesvd_ffi", "lapack_sgeev_ffi",
                             "lapack_dgeev_ffi", "lapack_sgees_ffi", "lapack_dsytrd_ffi"}) {
    ExpectImportError(PotrfProgram(target, "4x4xf32", "i32", kPotrfAttrs),
                      absl::StatusCode::kUnimplemented,
                      std::string("custom_call target @") + target + " is not supported: LAPACK "
                      "routine '");
  }
  ExpectImportError(PotrfProgram("lapack_sgesvd_ffi", "4x4xf32", "i32", kPotrfAttrs),
                    absl::StatusCode::kUnimplemented,
                    "routine 'gesvd' is not bound (accy binds lapack_{s,d}potrf_ffi, "
                    "lapack_{s,d}trsm_ffi, lapack_{s,d}getrf_ffi, lapack_{s,d}geqrf_ffi, "
                    "lapack_{s,d}orgqr_ffi, lapack_{s,d}syevd_ffi, lapack_{s,d}gesdd_ffi)");
  ExpectImportError(PotrfProgram("lapack_cgesdd_ffi", "4x4xf32", "i32", kPotrfAttrs),
                    absl::StatusCode::kUnimplemented,
                    "@lapack_cgesdd_ffi is not supported: complex element types");
  ExpectImportError(PotrfProgram("lapack_sgesdd", "4x4xf32", "i32", kPotrfAttrs),
                    absl::StatusCode::kUnimplemented,
                    "@lapack_sgesdd is not supported: the pre-FFI form");
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

// gesdd as JAX's _svd_cpu_gpu_lowering writes it (jax/_src/lax/linalg.py; the 2024-08-13 form of
// cpu_svd_lapack_gesdd.py): a [batch..., M, N] of `element` (f32 / f64), mode 'A' (65), 'S' (83)
// or 'N' (78), u [batch..., M, M or K] and vt [batch..., N or K, N] sized from `full`, column-major
// matrix layouts, row-major s and info, result 0 aliasing a. `results` overrides the result
// types (with their layouts) when not empty.
struct GesddForm {
  std::string prefix = "s", element = "f32";
  std::vector<int64_t> batch;
  int64_t m = 4, n = 4;
  char mode = 'A';
  bool full = true;
};

std::string Shape(const std::vector<int64_t>& batch, std::vector<int64_t> last,
                  const std::string& element) {
  std::string out = "tensor<";
  for (int64_t d : batch) out += std::to_string(d) + "x";
  for (int64_t d : last) out += std::to_string(d) + "x";
  return out + element + ">";
}

std::string Layout(const std::vector<int64_t>& dims) {
  std::string out = "dense<";
  if (!dims.empty()) {
    out += "[";
    for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
    out += "]";
  }
  return out + "> : tensor<" + std::to_string(dims.size()) + "xindex>";
}

std::string GesddProgram(const GesddForm& f) {
  const int64_t nb = static_cast<int64_t>(f.batch.size());
  const int64_t k = std::min(f.m, f.n);
  std::vector<int64_t> matrix = {nb, nb + 1}, vector, info;
  for (int64_t d = nb - 1; d >= 0; --d) {
    matrix.push_back(d);
    info.push_back(d);
  }
  for (int64_t d = nb; d >= 0; --d) vector.push_back(d);
  const std::string a = Shape(f.batch, {f.m, f.n}, f.element);
  const std::string types = a + ", " + Shape(f.batch, {k}, f.element) + ", " +
                            Shape(f.batch, {f.m, f.full ? f.m : k}, f.element) + ", " +
                            Shape(f.batch, {f.full ? f.n : k, f.n}, f.element) + ", " +
                            Shape(f.batch, {}, "i32");
  return "func.func @main(%a: " + a + ") -> (" + types + ") {\n  %0:5 = stablehlo.custom_call "
         "@lapack_" + f.prefix + "gesdd_ffi(%a) {mhlo.backend_config = {mode = " +
         std::to_string(static_cast<int>(f.mode)) + " : ui8}, operand_layouts = [" +
         Layout(matrix) + "], output_operand_aliases = [#stablehlo.output_operand_alias<"
         "output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], "
         "result_layouts = [" + Layout(matrix) + ", " + Layout(vector) + ", " + Layout(matrix) +
         ", " + Layout(matrix) + ", " + Layout(info) + "]} : (" + a + ") -> (" + types +
         ")\n  func.return %0#0, %0#1, %0#2, %0#3, %0#4 : " + types + "\n}\n";
}

TEST(LapackImportTest, JaxGesddImportsForEveryModeShapeAndTypeAndRoundTrips) {
  const std::vector<std::vector<int64_t>> batches = {{}, {2}, {2, 3}};
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{4, 4}, {5, 3}, {3, 5}};
  // (mode, full): jnp.linalg.svd's full_matrices x compute_uv.
  const std::vector<std::pair<char, bool>> modes = {{'A', true}, {'S', false}, {'N', true},
                                                    {'N', false}};
  for (const auto& [prefix, element] : {std::pair{"s", "f32"}, std::pair{"d", "f64"}}) {
    for (const auto& batch : batches) {
      for (const auto& [m, n] : shapes) {
        for (const auto& [mode, full] : modes) {
          GesddForm form{prefix, element, batch, m, n, mode, full};
          const std::string text = GesddProgram(form);
          StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
          ASSERT_TRUE(module.ok()) << module.status() << "\n" << text;
          const Operation& op = FirstOf(**module, OpKind::kLapack);
          EXPECT_EQ(op.GetString("call_target_name"),
                    std::string("lapack_") + prefix + "gesdd_ffi");
          EXPECT_EQ(op.GetInt("mode"), mode);
          ASSERT_EQ(op.num_results(), 5);
          const int64_t k = std::min(m, n);
          EXPECT_EQ(op.result(1)->type().dims().back(), k);
          EXPECT_EQ(op.result(2)->type().dims().back(), full ? m : k) << text;
          ExpectRoundTrip(**module);
        }
      }
    }
  }
  // The printed form is JAX's: backend_config, layouts (a rank-1 one as dense<[0]>, which parses
  // as JAX's dense<0>) and the alias of result 0.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> batched,
                       ParseStableHlo(GesddProgram({"s", "f32", {2}, 4, 4, 'A', true})));
  EXPECT_THAT(PrintModule(*batched),
              HasSubstr("stablehlo.custom_call @lapack_sgesdd_ffi(%arg0) {mhlo.backend_config = "
                        "{mode = 65 : ui8}, operand_layouts = [dense<[1, 2, 0]> : "
                        "tensor<3xindex>], output_operand_aliases = "
                        "[#stablehlo.output_operand_alias<output_tuple_indices = [0], "
                        "operand_index = 0, operand_tuple_indices = []>], result_layouts = "
                        "[dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, "
                        "dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>, "
                        "dense<[0]> : tensor<1xindex>]}"));
}

// `text` with every `from` replaced by `to`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

// `text` with the first `from` replaced by `to` (checked to occur).
std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(LapackImportTest, GesddModeErrorsNameTheAcceptedCharacters) {
  const std::string text = GesddProgram({});
  ExpectImportError(ReplaceFirst(text, "mode = 65", "mode = 86"),
                    absl::StatusCode::kInvalidArgument,
                    "custom_call @lapack_sgesdd_ffi: backend_config field mode is not a character "
                    "lapack_sgesdd_ffi accepts ('A' = 65, 'S' = 83 or 'N' = 78)");
  ExpectImportError(ReplaceFirst(text, "mode = 65 : ui8", ""), absl::StatusCode::kInvalidArgument,
                    "custom_call @lapack_sgesdd_ffi: mhlo.backend_config needs the field mode");
}

TEST(LapackImportTest, GesddTypeErrorsNameTheResultAndItsExpectedType) {
  // u and vt of the wrong size for the mode: 'S' with full matrices, 'A' with reduced ones.
  GesddForm tall{"s", "f32", {2}, 5, 3, 'S', true};
  ExpectImportError(GesddProgram(tall), absl::StatusCode::kInvalidArgument,
                    "lapack @lapack_sgesdd_ffi: u has type tensor<2x5x5xf32>, expected "
                    "tensor<2x5x3xf32> (M x M with mode 'A', M x min(M, N) with 'S', either with "
                    "'N')");
  GesddForm wide{"d", "f64", {}, 3, 5, 'A', false};
  ExpectImportError(GesddProgram(wide), absl::StatusCode::kInvalidArgument,  // K = M: u fits
                    "lapack @lapack_dgesdd_ffi: vt has type tensor<3x5xf64>, expected tensor<5x5xf64> (N x N with mode 'A'");
  const std::string square = GesddProgram({});
  ExpectImportError(ReplaceAll(square, "tensor<4xf32>", "tensor<3xf32>"),
                    absl::StatusCode::kInvalidArgument,
                    "s has type tensor<3xf32>, expected tensor<4xf32> (a's batch dims and min(M, "
                    "N))");
  ExpectImportError(ReplaceAll(square, "tensor<i32>", "tensor<i64>"),
                    absl::StatusCode::kInvalidArgument,
                    "info has type tensor<i64>, expected tensor<i32> (i32 over a's batch dims)");
  ExpectImportError(ReplaceAll(square, "-> (tensor<4x4xf32>, tensor<4xf32>",
                               "-> (tensor<4x4xf64>, tensor<4xf32>"),
                    absl::StatusCode::kInvalidArgument,
                    "lapack @lapack_sgesdd_ffi: result 0 (a, overwritten) has type "
                    "tensor<4x4xf64>, expected tensor<4x4xf32> (a's type)");
  // Mode 'N' takes either size of u and vt, but no other.
  const std::string values_only = GesddProgram({"s", "f32", {}, 5, 3, 'N', true});
  ASSERT_TRUE(ParseStableHlo(values_only).ok());
  ExpectImportError(ReplaceAll(values_only, "tensor<5x5xf32>", "tensor<5x4xf32>"),
                    absl::StatusCode::kInvalidArgument,
                    "u has type tensor<5x4xf32>, expected tensor<5x5xf32> or tensor<5x3xf32>");
  ExpectImportError(ReplaceAll(values_only, "tensor<3x3xf32>", "tensor<2x3xf32>"),
                    absl::StatusCode::kInvalidArgument,
                    "vt has type tensor<2x3xf32>, expected tensor<3x3xf32> (N x N with mode 'A', "
                    "min(M, N) x N with 'S', either with 'N')");  // K = N: one size
  ExpectImportError(ReplaceAll(square, "f32", "f64"), absl::StatusCode::kInvalidArgument,
                    "lapack @lapack_sgesdd_ffi: a has type tensor<4x4xf64>, expected element "
                    "type f32 (the target's prefix)");
  // jaxlib's August 2024 form returned its iwork and work too.
  std::string seven =
      ReplaceAll(square, "tensor<i32>", "tensor<i32>, tensor<32xi32>, tensor<268xf32>");
  seven = ReplaceFirst(seven, "%0:5", "%0:7");
  seven = ReplaceFirst(seven, "%0#4 :", "%0#4, %0#5, %0#6 :");
  seven = ReplaceFirst(seven, "dense<> : tensor<0xindex>]",
                       "dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>, dense<0> : "
                       "tensor<1xindex>]");
  ExpectImportError(seven, absl::StatusCode::kInvalidArgument,
                    "expected 1 operand (a) and 5 results (a, s, u, vt, info), got 1 and 7 "
                    "(jaxlib's August 2024 form with iwork and work results is not bound");
}

TEST(LapackImportTest, GesddLayoutsOtherThanJaxsAreUnimplemented) {
  const std::string text = GesddProgram({"s", "f32", {2}, 4, 4, 'A', true});
  // u row-major: the third result layout.
  const std::string cm = "dense<[1, 2, 0]> : tensor<3xindex>";
  std::string bad = text;
  size_t at = 0;
  for (int i = 0; i < 3; ++i) at = bad.find(cm, at + 1);  // operand, a, u
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, cm.size(), "dense<[2, 1, 0]> : tensor<3xindex>");
  ExpectImportError(bad, absl::StatusCode::kUnimplemented,
                    "custom_call @lapack_sgesdd_ffi: result_layouts 2 is [2, 1, 0], accy binds "
                    "[1, 2, 0] (column-major matrices, as JAX writes it)");
  ExpectImportError(ReplaceFirst(text, "dense<[1, 0]> : tensor<2xindex>",
                                 "dense<[0, 1]> : tensor<2xindex>"),
                    absl::StatusCode::kUnimplemented,
                    "result_layouts 1 is [0, 1], accy binds [1, 0] (row-major");
}

}  // namespace
}  // namespace accy
