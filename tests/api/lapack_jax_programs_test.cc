// The LAPACK custom_calls as JAX exports them, end to end: the module texts, inputs and expected
// outputs of jax/_src/internal_test_util/export_back_compat_test_data/
// cpu_cholesky_lapack_potrf.py (2024-05-31, f32 and f64: symmetrize, potrf, NaN where info != 0,
// tril in a private function) and cpu_triangular_solve_blas_trsm.py (2025-10-20, f32 and f64),
// and cpu_lu_lapack_getrf.py (2024-05-31, f32, and the same program in f64: getrf of iota(9)
// as 3x3, pivots - 1, NaN where info < 0, and the permutation from the pivots by a while loop
// over a private function) and cpu_qr_lapack_geqrf.py (2025-04-02, f64, and the same program
// in f32: geqrf, orgqr of the padded reflectors, triu of R), imported, compiled and run, and compared with JAX's outputs and with
// the reference evaluator.
// Tolerances, |accy - JAX| <= abs x max(1, max |JAX|): f32 4e-6 (a few ULP: JAX's LAPACK and
// the one this machine selects round differently), f64 1e-14. A complex program (c64 trsm) fails
// to import with kUnimplemented at its complex types.
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

// `text` with every `from` replaced by `to`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

// cpu_cholesky_lapack_potrf.py data_2024_05_31["f32"] / ["f64"], mlir_module_text with TYPE
// substituted (the two differ only in the element type and the NaN constant).
std::string CholeskyProgram(const std::string& type, const std::string& nan) {
  std::string text = R"mlir(#loc1 = loc("x")
#loc2 = loc("third_party/py/jax/tests/export_back_compat_test.py":182:4)
#loc7 = loc("jit(cholesky)/jit(main)/pjit[in_shardings=(UnspecifiedValue,) out_shardings=(UnspecifiedValue,) in_layouts=(None,) out_layouts=(None,) resource_env=None donated_invars=(False,) name=tril keep_unused=False inline=False]"(#loc2))
module @jit_cholesky attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xTYPE> {mhlo.layout_mode = "default"} loc("x")) -> (tensor<4x4xTYPE> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x4xTYPE>) -> tensor<4x4xTYPE> loc(#loc3)
    %1 = stablehlo.add %arg0, %0 : tensor<4x4xTYPE> loc(#loc4)
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<TYPE> loc(#loc)
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<TYPE>) -> tensor<4x4xTYPE> loc(#loc5)
    %3 = stablehlo.divide %1, %2 : tensor<4x4xTYPE> loc(#loc5)
    %c = stablehlo.constant dense<4> : tensor<i64> loc(#loc6)
    %c_0 = stablehlo.constant dense<4> : tensor<i64> loc(#loc6)
    %4:2 = stablehlo.custom_call @lapack_PREFIXpotrf_ffi(%3) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xTYPE>) -> (tensor<4x4xTYPE>, tensor<i32>) loc(#loc6)
    %c_1 = stablehlo.constant dense<0> : tensor<i32> loc(#loc6)
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<i32> loc(#loc6)
    %6 = stablehlo.compare  EQ, %4#1, %5,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1> loc(#loc6)
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<i1>) -> tensor<1x1xi1> loc(#loc6)
    %cst_2 = stablehlo.constant dense<NAN> : tensor<TYPE> loc(#loc6)
    %8 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<TYPE>) -> tensor<4x4xTYPE> loc(#loc6)
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1> loc(#loc6)
    %10 = stablehlo.select %9, %4#0, %8 : tensor<4x4xi1>, tensor<4x4xTYPE> loc(#loc6)
    %11 = call @tril(%10) : (tensor<4x4xTYPE>) -> tensor<4x4xTYPE> loc(#loc7)
    return %11 : tensor<4x4xTYPE> loc(#loc)
  } loc(#loc)
  func.func private @tril(%arg0: tensor<4x4xTYPE> {mhlo.layout_mode = "default"} loc("jit(cholesky)/jit(main)/pjit[in_shardings=(UnspecifiedValue,) out_shardings=(UnspecifiedValue,) in_layouts=(None,) out_layouts=(None,) resource_env=None donated_invars=(False,) name=tril keep_unused=False inline=False]"(#loc2))) -> (tensor<4x4xTYPE> {mhlo.layout_mode = "default"}) {
    %0 = stablehlo.iota dim = 0 : tensor<4x4xi32> loc(#loc8)
    %c = stablehlo.constant dense<0> : tensor<i32> loc(#loc7)
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x4xi32> loc(#loc9)
    %2 = stablehlo.add %0, %1 : tensor<4x4xi32> loc(#loc9)
    %3 = stablehlo.iota dim = 1 : tensor<4x4xi32> loc(#loc10)
    %4 = stablehlo.compare  GE, %2, %3,  SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1> loc(#loc11)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<TYPE> loc(#loc7)
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<TYPE>) -> tensor<4x4xTYPE> loc(#loc12)
    %6 = stablehlo.select %4, %arg0, %5 : tensor<4x4xi1>, tensor<4x4xTYPE> loc(#loc13)
    return %6 : tensor<4x4xTYPE> loc(#loc7)
  } loc(#loc7)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(cholesky)/jit(main)/transpose[permutation=(1, 0)]"(#loc2))
#loc4 = loc("jit(cholesky)/jit(main)/add"(#loc2))
#loc5 = loc("jit(cholesky)/jit(main)/div"(#loc2))
#loc6 = loc("jit(cholesky)/jit(main)/cholesky"(#loc2))
#loc8 = loc("jit(cholesky)/jit(main)/jit(tril)/iota[dtype=int32 shape=(4, 4) dimension=0]"(#loc2))
#loc9 = loc("jit(cholesky)/jit(main)/jit(tril)/add"(#loc2))
#loc10 = loc("jit(cholesky)/jit(main)/jit(tril)/iota[dtype=int32 shape=(4, 4) dimension=1]"(#loc2))
#loc11 = loc("jit(cholesky)/jit(main)/jit(tril)/ge"(#loc2))
#loc12 = loc("jit(cholesky)/jit(main)/jit(tril)/broadcast_in_dim[shape=(4, 4) broadcast_dimensions=()]"(#loc2))
#loc13 = loc("jit(cholesky)/jit(main)/jit(tril)/select_n"(#loc2))
)mlir";
  text = ReplaceAll(std::move(text), "TYPE", type);
  text = ReplaceAll(std::move(text), "PREFIX", type == "f32" ? "s" : "d");
  return ReplaceAll(std::move(text), "NAN", nan);
}

// cpu_triangular_solve_blas_trsm.py data_2025_10_20["f32"] / ["f64"] / ["c64"].
std::string TrsmProgram(const std::string& prefix, const std::string& type) {
  return R"mlir(#loc1 = loc("a")
#loc2 = loc("b")
module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4x)mlir" + type + R"mlir(> loc("a"), %arg1: tensor<4x5x)mlir" + type +
         R"mlir(> loc("b")) -> (tensor<4x5x)mlir" + type + R"mlir(> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @lapack_)mlir" + prefix + R"mlir(trsm_ffi(%arg0, %arg1) {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=5, m=4, n=5}, custom>} : (tensor<4x4x)mlir" +
         type + R"mlir(>, tensor<4x5x)mlir" + type + R"mlir(>) -> tensor<4x5x)mlir" + type +
         R"mlir(> loc(#loc5)
    return %0 : tensor<4x5x)mlir" + type + R"mlir(> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("third_party/py/jax/tests/export_back_compat_test.py":654:13)
#loc4 = loc("jit(func)"(#loc3))
#loc5 = loc("triangular_solve"(#loc4))
)mlir";
}

// Runs `text`'s main on the engine and the reference evaluator and compares both with
// `expected` (row-major) within `abs` x max(1, max |expected|).
void ExpectJaxOutputs(const std::string& text, ElementType type, const std::vector<Tensor>& inputs,
                      const std::vector<double>& expected, double abs) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(*module, "main", inputs));
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].element_type(), type);
  ASSERT_EQ(outputs[0].element_count(), static_cast<int64_t>(expected.size()));
  double scale = 1;
  for (double value : expected) scale = std::max(scale, std::fabs(value));
  for (size_t i = 0; i < expected.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i);
    EXPECT_NEAR(outputs[0].GetAsDouble(k), expected[i], abs * scale) << "engine " << i;
    EXPECT_NEAR(reference[0].GetAsDouble(k), expected[i], abs * scale) << "reference " << i;
  }
}

Tensor Matrix(ElementType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Tensor t = Tensor::Allocate(*TensorType::Create(type, std::move(dims))).value();
  for (size_t i = 0; i < values.size(); ++i) t.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return t;
}

TEST(LapackJaxProgramsTest, CholeskyF32MatchesJaxsOutputs) {
  const Tensor x = Matrix(ElementType::kF32, {4, 4},
                          {24.343887, 13.603931, 20.50489, 12.063957,    //
                           13.603931, 58.879753, -31.84056, 16.328014,   //
                           20.50489, -31.84056, 66.89075, -9.92216,      //
                           12.063957, 16.328014, -9.92216, 23.640732});
  const std::vector<double> expected = {4.9339523, 0, 0, 0,                   //
                                        2.7572076, 7.160835, 0, 0,            //
                                        4.155875, -6.0466657, 3.613486, 0,    //
                                        2.4450898, 1.3387257, -3.3177993, 2.2050598};
  ExpectJaxOutputs(CholeskyProgram("f32", "0x7FC00000"), ElementType::kF32, {x}, expected, 4e-6);
}

TEST(LapackJaxProgramsTest, CholeskyF64MatchesJaxsOutputs) {
  const Tensor x = Matrix(
      ElementType::kF64, {4, 4},
      {23.022171138130666, -16.79765603341739, 0.9133449305189147, -25.36636199966769,    //
       -16.79765603341739, 31.655770252600092, -1.5189878284433447, 20.0344758332268,     //
       0.9133449305189147, -1.5189878284433447, 10.940134497877208, 8.169020034607513,    //
       -25.36636199966769, 20.0344758332268, 8.169020034607513, 37.054603917509596});
  const std::vector<double> expected = {
      4.7981424674691215, 0, 0, 0,                                            //
      -3.500866459740129, 4.404509539513645, 0, 0,                            //
      0.19035385812557526, -0.19357078998256214, 3.2964268922333835, 0,       //
      -5.286704630312426, 0.34656047324209965, 2.803777831116442, 1.060228174247857};
  ExpectJaxOutputs(CholeskyProgram("f64", "0x7FF8000000000000"), ElementType::kF64, {x},
                   expected, 1e-14);
}

TEST(LapackJaxProgramsTest, CholeskyOfAMatrixThatIsNotPositiveDefiniteIsNaN) {
  // JAX's program selects NaN where info != 0: diag(1, -1, 1, 1) fails at order 2.
  const Tensor x = Matrix(ElementType::kF32, {4, 4},
                          {1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseStableHlo(CholeskyProgram("f32", "0x7FC00000")));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(std::vector<Tensor>{x}));
  for (int64_t k = 0; k < 16; ++k) {
    if (k / 4 >= k % 4) {
      EXPECT_TRUE(std::isnan(outputs[0].GetAsDouble(k))) << k;
    } else {
      EXPECT_EQ(outputs[0].GetAsDouble(k), 0) << k;
    }
  }
}

const std::vector<double> kTrsmA = {5, 0, 0, 0, 4, 10, 0, 0, 8, 9, 15, 0, 12, 13, 14, 20};
const std::vector<double> kTrsmB = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,
                                    10, 11, 12, 13, 14, 15, 16, 17, 18, 19};

TEST(LapackJaxProgramsTest, TrsmF32AndF64MatchJaxsOutputs) {
  const std::vector<double> expected = {
      0.0,                 0.2,                 0.4,                 0.6000000000000001,
      0.8,                 0.5,                 0.52,                0.54,
      0.5599999999999999,  0.58,                0.36666666666666664, 0.3146666666666667,
      0.2626666666666667,  0.21066666666666667, 0.15866666666666665, 0.16833333333333336,
      0.1217333333333333,  0.07513333333333323, 0.0285333333333333,  -0.018066666666666675};
  for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
    const bool f32 = type == ElementType::kF32;
    ExpectJaxOutputs(TrsmProgram(f32 ? "s" : "d", f32 ? "f32" : "f64"), type,
                     {Matrix(type, {4, 4}, kTrsmA), Matrix(type, {4, 5}, kTrsmB)}, expected,
                     f32 ? 4e-6 : 1e-14);
  }
}

// cpu_lu_lapack_getrf.py data_2024_05_31["f32"] mlir_module_text (locations dropped), TYPE and
// NAN substituted for the f64 variant.
std::string LuProgram(const std::string& type, const std::string& nan) {
  std::string text = R"mlir(module @jit__lambda_ attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<3x3xTYPE> {jax.result_info = "[0]", mhlo.layout_mode = "default"}, tensor<3xi32> {jax.result_info = "[1]", mhlo.layout_mode = "default"}, tensor<3xi32> {jax.result_info = "[2]", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.iota dim = 0 : tensor<9xTYPE>
    %1 = stablehlo.reshape %0 : (tensor<9xTYPE>) -> tensor<3x3xTYPE>
    %c = stablehlo.constant dense<3> : tensor<i64>
    %c_0 = stablehlo.constant dense<3> : tensor<i64>
    %2:3 = stablehlo.custom_call @lapack_PREFIXgetrf_ffi(%1) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xTYPE>) -> (tensor<3x3xTYPE>, tensor<3xi32>, tensor<i32>)
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %4 = stablehlo.subtract %2#1, %3 : tensor<3xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<i32>
    %6 = stablehlo.compare  GE, %2#2, %5,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst = stablehlo.constant dense<NAN> : tensor<TYPE>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<TYPE>) -> tensor<3x3xTYPE>
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %10 = stablehlo.select %9, %2#0, %8 : tensor<3x3xi1>, tensor<3x3xTYPE>
    %11 = stablehlo.iota dim = 0 : tensor<3xi32>
    %c_3 = stablehlo.constant dense<0> : tensor<i64>
    %c_4 = stablehlo.constant dense<0> : tensor<i64>
    %12:4 = stablehlo.while(%iterArg = %c_4, %iterArg_5 = %c_3, %iterArg_6 = %11, %iterArg_7 = %4) : tensor<i64>, tensor<i64>, tensor<3xi32>, tensor<3xi32>
     cond {
      %c_8 = stablehlo.constant dense<3> : tensor<i64>
      %13 = stablehlo.compare  LT, %iterArg, %c_8,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %13 : tensor<i1>
    } do {
      %13:3 = func.call @None(%iterArg_5, %iterArg_6, %iterArg_7) : (tensor<i64>, tensor<3xi32>, tensor<3xi32>) -> (tensor<i64>, tensor<3xi32>, tensor<3xi32>)
      %c_8 = stablehlo.constant dense<1> : tensor<i64>
      %14 = stablehlo.add %iterArg, %c_8 : tensor<i64>
      stablehlo.return %14, %13#0, %13#1, %13#2 : tensor<i64>, tensor<i64>, tensor<3xi32>, tensor<3xi32>
    }
    return %10, %4, %12#2 : tensor<3x3xTYPE>, tensor<3xi32>, tensor<3xi32>
  }
  func.func private @None(%arg0: tensor<i64>, %arg1: tensor<3xi32>, %arg2: tensor<3xi32>) -> (tensor<i64>, tensor<3xi32>, tensor<3xi32>) {
    %c = stablehlo.constant dense<1> : tensor<i64>
    %0 = stablehlo.add %arg0, %c : tensor<i64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %1 = stablehlo.compare  LT, %arg0, %c_0,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c_1 = stablehlo.constant dense<3> : tensor<i64>
    %2 = stablehlo.add %arg0, %c_1 : tensor<i64>
    %3 = stablehlo.select %1, %2, %arg0 : tensor<i1>, tensor<i64>
    %4 = stablehlo.convert %3 : (tensor<i64>) -> tensor<i32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %6 = "stablehlo.gather"(%arg2, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0]>, indices_are_sorted = true, slice_sizes = array<i64: 1>}> : (tensor<3xi32>, tensor<1xi32>) -> tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i64>
    %7 = stablehlo.compare  LT, %arg0, %c_2,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<3> : tensor<i64>
    %8 = stablehlo.add %arg0, %c_3 : tensor<i64>
    %9 = stablehlo.select %7, %8, %arg0 : tensor<i1>, tensor<i64>
    %10 = stablehlo.convert %9 : (tensor<i64>) -> tensor<i32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %12 = "stablehlo.gather"(%arg1, %11) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0]>, indices_are_sorted = true, slice_sizes = array<i64: 1>}> : (tensor<3xi32>, tensor<1xi32>) -> tensor<i32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %13 = stablehlo.compare  LT, %6, %c_4,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_5 = stablehlo.constant dense<3> : tensor<i32>
    %14 = stablehlo.add %6, %c_5 : tensor<i32>
    %15 = stablehlo.select %13, %14, %6 : tensor<i1>, tensor<i32>
    %16 = stablehlo.dynamic_slice %arg1, %15, sizes = [1] : (tensor<3xi32>, tensor<i32>) -> tensor<1xi32>
    %17 = stablehlo.reshape %16 : (tensor<1xi32>) -> tensor<i32>
    %c_6 = stablehlo.constant dense<0> : tensor<i64>
    %18 = stablehlo.compare  LT, %arg0, %c_6,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c_7 = stablehlo.constant dense<3> : tensor<i64>
    %19 = stablehlo.add %arg0, %c_7 : tensor<i64>
    %20 = stablehlo.select %18, %19, %arg0 : tensor<i1>, tensor<i64>
    %21 = stablehlo.convert %20 : (tensor<i64>) -> tensor<i32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %23 = "stablehlo.scatter"(%arg1, %22, %17) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
      stablehlo.return %arg4 : tensor<i32>
    }) : (tensor<3xi32>, tensor<1xi32>, tensor<i32>) -> tensor<3xi32>
    %c_8 = stablehlo.constant dense<0> : tensor<i32>
    %24 = stablehlo.compare  LT, %6, %c_8,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_9 = stablehlo.constant dense<3> : tensor<i32>
    %25 = stablehlo.add %6, %c_9 : tensor<i32>
    %26 = stablehlo.select %24, %25, %6 : tensor<i1>, tensor<i32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %28 = "stablehlo.scatter"(%23, %27, %12) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
      stablehlo.return %arg4 : tensor<i32>
    }) : (tensor<3xi32>, tensor<1xi32>, tensor<i32>) -> tensor<3xi32>
    return %0, %28, %arg2 : tensor<i64>, tensor<3xi32>, tensor<3xi32>
  }
}
)mlir";
  text = ReplaceAll(std::move(text), "TYPE", type);
  text = ReplaceAll(std::move(text), "PREFIX", type == "f32" ? "s" : "d");
  return ReplaceAll(std::move(text), "NAN", nan);
}

TEST(LapackJaxProgramsTest, LuAndItsPermutationMatchJaxsOutputs) {
  // JAX's expected outputs: lu [[6, 7, 8], [0, 1, 2], [0.5, 0.5, 0]] (exact), pivots (0-based)
  // [2, 2, 2], permutation [2, 0, 1].
  const std::vector<double> lu = {6, 7, 8, 0, 1, 2, 0.5, 0.5, 0};
  for (const auto& [type, nan] : {std::pair<std::string, std::string>{"f32", "0x7FC00000"},
                                  {"f64", "0x7FF8000000000000"}}) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(LuProgram(type, nan)));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(std::vector<Tensor>{}));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference,
                         Evaluate(*module, "main", std::vector<Tensor>{}));
    ASSERT_EQ(outputs.size(), 3u);
    for (const std::vector<Tensor>* got : {&outputs, &reference}) {
      for (int64_t i = 0; i < 9; ++i) {
        EXPECT_EQ((*got)[0].GetAsDouble(i), lu[static_cast<size_t>(i)]) << type << " " << i;
      }
      const std::vector<double> pivots = {2, 2, 2}, permutation = {2, 0, 1};
      for (int64_t i = 0; i < 3; ++i) {
        EXPECT_EQ((*got)[1].GetAsDouble(i), pivots[static_cast<size_t>(i)]) << type << " " << i;
        EXPECT_EQ((*got)[2].GetAsDouble(i), permutation[static_cast<size_t>(i)]) << type;
      }
    }
  }
}

// cpu_qr_lapack_geqrf.py data_2025_04_02["f64"] mlir_module_text (locations dropped), TYPE and
// PREFIX substituted for the f32 variant.
std::string QrProgram(const std::string& type) {
  std::string text = R"mlir(module @jit__lambda_ attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<3x3xTYPE> {jax.result_info = "result[0]"}, tensor<3x3xTYPE> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<-1> : tensor<i32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<TYPE>
    %0 = stablehlo.iota dim = 0 : tensor<9xTYPE>
    %1 = stablehlo.reshape %0 : (tensor<9xTYPE>) -> tensor<3x3xTYPE>
    %2:2 = stablehlo.custom_call @lapack_PREFIXgeqrf_ffi(%1) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<3x3xTYPE>) -> (tensor<3x3xTYPE>, tensor<3xTYPE>)
    %3 = stablehlo.pad %2#0, %cst, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<3x3xTYPE>, tensor<TYPE>) -> tensor<3x3xTYPE>
    %4 = stablehlo.custom_call @lapack_PREFIXorgqr_ffi(%3, %2#1) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<3x3xTYPE>, tensor<3xTYPE>) -> tensor<3x3xTYPE>
    %5 = stablehlo.iota dim = 0 : tensor<3x3xi32>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3x3xi32>
    %7 = stablehlo.add %5, %6 : tensor<3x3xi32>
    %8 = stablehlo.iota dim = 1 : tensor<3x3xi32>
    %9 = stablehlo.compare  GE, %7, %8,  SIGNED : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<TYPE>) -> tensor<3x3xTYPE>
    %11 = stablehlo.select %9, %10, %2#0 : tensor<3x3xi1>, tensor<3x3xTYPE>
    return %4, %11 : tensor<3x3xTYPE>, tensor<3x3xTYPE>
  }
}
)mlir";
  text = ReplaceAll(std::move(text), "TYPE", type);
  return ReplaceAll(std::move(text), "PREFIX", type == "f32" ? "s" : "d");
}

TEST(LapackJaxProgramsTest, QrMatchesJaxsOutputs) {
  // JAX's f64 expected outputs; R[2][2] is rounding noise of a singular matrix (JAX: -8.9e-16 in
  // f64, 7.2e-7 in f32), inside the tolerance.
  const std::vector<double> q = {0.0, 0.9128709291752773, 0.40824829046386235,
                                 -0.447213595499958, 0.3651483716701102, -0.8164965809277263,
                                 -0.894427190999916, -0.1825741858350548, 0.40824829046386324};
  const std::vector<double> r = {-6.7082039324993694, -8.0498447189992444, -9.3914855054991175,
                                 0, 1.0954451150103341, 2.1908902300206665, 0, 0, 0};
  for (const std::string type : {"f32", "f64"}) {
    const double abs = type == "f32" ? 4e-6 : 1e-14;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(QrProgram(type)));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(std::vector<Tensor>{}));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference,
                         Evaluate(*module, "main", std::vector<Tensor>{}));
    for (const std::vector<Tensor>* got : {&outputs, &reference}) {
      ASSERT_EQ(got->size(), 2u);
      for (int64_t i = 0; i < 9; ++i) {
        EXPECT_NEAR((*got)[0].GetAsDouble(i), q[static_cast<size_t>(i)], abs) << type << " q";
        EXPECT_NEAR((*got)[1].GetAsDouble(i), r[static_cast<size_t>(i)], abs * 10) << type;
      }
    }
  }
}

TEST(LapackJaxProgramsTest, ComplexProgramsAreUnimplemented) {
  // JAX's complex program stops at its complex parameter types, before the target (whose own
  // kUnimplemented tests/stablehlo/lapack_import_test.cc checks with real operand types).
  const Status status = ParseStableHlo(TrsmProgram("c", "complex<f32>")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("complex element type 'complex<f32>' is not supported by accy"));
}

}  // namespace
}  // namespace accy
