// jnp.linalg.svd as JAX exports it for CPU, end to end (a sibling of lapack_jax_programs_test.cc,
// kept apart for size): the module text, inputs and expected outputs of
// jax/_src/internal_test_util/export_back_compat_test_data/cpu_svd_lapack_gesdd.py (JAX, Apache
// License 2.0)
// (data_2024_08_13 "f32" and "f64": a 2x4x4 batch, full_matrices and compute_uv, the gesdd_ffi
// call with mode 'A', then s, u and vt replaced by NaN where info != 0), imported, compiled, run
// and compared with JAX's outputs and with the reference evaluator; and the same program as JAX's
// _svd_cpu_gpu_lowering writes it for the other cases (full_matrices False, compute_uv False,
// tall and wide, unbatched and two batch dims), hand-written in that form since JAX is not
// installable here, compared with the reference and checked for u diag(s) vt = a, u^T u = I,
// vt vt^T = I; a NaN in one batch makes only that batch's outputs NaN (info -4, JAX's select).
// Tolerances x max(1, s_0): s f32 1e-5 (LAPACKs round differently), f64 1e-13; u and vt, compared
// up to the sign of each pair (u_i, v_i), f32 2e-5, f64 1e-12 (JAX's data) or 5e-3 / 1e-9 (vs the
// reference); properties f32 2e-5, f64 1e-12.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tests/lapack_svd_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using svd_test::SvdShape;
using Dims = std::vector<int64_t>;

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

// cpu_svd_lapack_gesdd.py data_2024_08_13["f32"] / ["f64"], mlir_module_text with TYPE, PREFIX
// and NAN substituted (the two differ only there).
std::string JaxSvdProgram(const std::string& type) {
  const std::string text = R"mlir(#loc1 = loc("input")
module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xTYPE> {mhlo.layout_mode = "default"} loc("input")) -> (tensor<2x4x4xTYPE> {jax.result_info = "[0]", mhlo.layout_mode = "default"}, tensor<2x4xTYPE> {jax.result_info = "[1]", mhlo.layout_mode = "default"}, tensor<2x4x4xTYPE> {jax.result_info = "[2]", mhlo.layout_mode = "default"}) {
    %c = stablehlo.constant dense<2> : tensor<i64> loc(#loc3)
    %c_0 = stablehlo.constant dense<4> : tensor<i64> loc(#loc3)
    %c_1 = stablehlo.constant dense<4> : tensor<i64> loc(#loc3)
    %0:5 = stablehlo.custom_call @lapack_PREFIXgesdd_ffi(%arg0) {mhlo.backend_config = {mode = 65 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4x4xTYPE>) -> (tensor<2x4x4xTYPE>, tensor<2x4xTYPE>, tensor<2x4x4xTYPE>, tensor<2x4x4xTYPE>, tensor<2xi32>) loc(#loc3)
    %c_2 = stablehlo.constant dense<0> : tensor<i32> loc(#loc3)
    %1 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<2xi32> loc(#loc3)
    %2 = stablehlo.compare  EQ, %0#4, %1,  SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1> loc(#loc3)
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xi1>) -> tensor<2x1xi1> loc(#loc3)
    %cst = stablehlo.constant dense<NAN> : tensor<TYPE> loc(#loc3)
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<TYPE>) -> tensor<2x4xTYPE> loc(#loc3)
    %5 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<2x1xi1>) -> tensor<2x4xi1> loc(#loc3)
    %6 = stablehlo.select %5, %0#1, %4 : tensor<2x4xi1>, tensor<2x4xTYPE> loc(#loc3)
    %7 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1> loc(#loc3)
    %cst_3 = stablehlo.constant dense<NAN> : tensor<TYPE> loc(#loc3)
    %8 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<TYPE>) -> tensor<2x4x4xTYPE> loc(#loc3)
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x4x4xi1> loc(#loc3)
    %10 = stablehlo.select %9, %0#2, %8 : tensor<2x4x4xi1>, tensor<2x4x4xTYPE> loc(#loc3)
    %11 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1> loc(#loc3)
    %cst_4 = stablehlo.constant dense<NAN> : tensor<TYPE> loc(#loc3)
    %12 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<TYPE>) -> tensor<2x4x4xTYPE> loc(#loc3)
    %13 = stablehlo.broadcast_in_dim %11, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x4x4xi1> loc(#loc3)
    %14 = stablehlo.select %13, %0#3, %12 : tensor<2x4x4xi1>, tensor<2x4x4xTYPE> loc(#loc3)
    return %10, %6, %14 : tensor<2x4x4xTYPE>, tensor<2x4xTYPE>, tensor<2x4x4xTYPE> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("third_party/py/jax/tests/export_back_compat_test.py":574:13)
#loc3 = loc("jit(func)/jit(main)/svd[full_matrices=True compute_uv=True subset_by_index=None]"(#loc2))
)mlir";
  const bool f32 = type == "f32";
  return ReplaceAll(ReplaceAll(ReplaceAll(text, "TYPE", type), "PREFIX", f32 ? "s" : "d"), "NAN",
                    f32 ? "0x7FC00000" : "0x7FF8000000000000");
}

Tensor Values(ElementType type, Dims dims, const std::vector<double>& values) {
  Tensor t = Tensor::Allocate(*TensorType::Create(type, std::move(dims))).value();
  for (size_t i = 0; i < values.size(); ++i) t.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return t;
}

StatusOr<std::vector<Tensor>> RunEngine(const Module& module, const std::vector<Tensor>& inputs) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create());
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, engine->Compile(module));
  return exe->Run(inputs);
}

TEST(LapackJaxSvdProgramsTest, JaxsExportedSvdMatchesJaxsOutputsUpToPairSigns) {
  // data_2024_08_13: inputs, then JAX's u, s and vt (f32 rows first, f64 below).
  const std::vector<double> a32 = {
      1.5410905, -2.775912, -2.374003, 4.028736,  -0.56933475, 1.6115232, 0.9041465, -0.8321383,
      -5.382895, 4.734856,  2.1972926, 1.5553856, 0.5109847,   -1.1969309, 3.3766198, -1.3678027,
      2.2637439, 3.406768,  4.809871,  2.8010902, -1.9981416,  -0.6599986, 0.5138156, 4.5982494,
      -2.335944, -9.151717, -1.0481138, 2.272443, -8.257684,   1.8223318, 0.38403794, 5.0769973};
  const std::vector<double> u32 = {
      -0.48540133, 0.6682398,   -0.48819908, -0.28196266, 0.21800542, -0.13631387, 0.14819776,
      -0.9549501,  0.84570533,  0.44643924,  -0.27943408, 0.08597416, 0.04052323,  -0.57928103,
      -0.8133976,  -0.034290295, -0.21146727, 0.46376404, 0.7863092,  0.34917426,  0.3461469,
      0.21883708,  0.3399651,   -0.846591,   0.6526193,   -0.58340365, 0.39724028, 0.27555162,
      0.6399629,   0.6298205,   -0.32915345, 0.29228795};
  const std::vector<double> s32 = {8.551605,  5.3574076, 2.8073733, 0.52260846,
                                   11.457574, 10.041604, 5.671653,  1.4754113};
  const std::vector<double> vt32 = {
      -0.6319044,  0.66122514,  0.39110142, -0.10255312, -0.29710513, 0.13673344, -0.50112027,
      0.8011937,   0.08969161,  0.4433049,  -0.736473,   -0.5030347,  -0.7101976, -0.5895469,
      -0.23135659, -0.30745378, -0.69643414, -0.50230867, -0.11150038, 0.50023323, -0.32121184,
      0.7889567,   0.31831914,  0.4159848,  0.5096959,   -0.31399366, 0.60193473, 0.5284817,
      -0.3898877,  -0.16322279, 0.72382,    -0.5453722};
  const std::vector<double> a64 = {
      0.3445689867809981,  3.5114993759427104,  4.702602090972179,   -0.2702264758497052,
      2.209901632583705,   -2.6286702510632773, 4.591276599385847,   3.4465035398844828,
      -1.5083742421154478, 3.3225165204269635,  1.2596205557926703,  3.524804355848018,
      1.5118969169108838,  1.838885943509677,   2.818520751293422,   3.06002540493494,
      -2.4045510943950843, -1.5657555633438576, -0.6061472334580296, -0.23926156407779164,
      4.087879920053448,   -3.2507640936811715, -2.2556577657517476, 6.090369998330348,
      1.1165401344486945,  2.2134726894037247,  5.225178515435584,   1.9794693474107725,
      -4.127878192684534,  -0.37313660200336163, 0.7893465897510026, -2.0315217791342848};
  const std::vector<double> u64 = {
      -0.5109626909166218,  -0.41744996156105796, -0.731253241567692,   0.17297790257908272,
      -0.5623501368035175,  0.7608931604238581,   0.03470920608540995,  0.32186828528169453,
      -0.39585755254587396, -0.49547702914054115, 0.6561880513437817,   0.4089212062978682,
      -0.5157288533916832,  -0.035772078593888285, 0.18297871183094855, -0.8362194085221047,
      -0.12124821978030864, -0.30260506534356224, -0.5817463045715605,  -0.7451847292758066,
      0.8877417367326683,   -0.1579400123987918,  -0.37611807392676866, 0.21331843758089156,
      0.030552216758649886, 0.9244545314395404,   -0.36861075330670934, -0.09260936183071362,
      -0.443035032603635,   -0.1699086407831784,  -0.6198649402326368,  0.624994775612963};
  const std::vector<double> s64 = {8.951386926411187, 5.762891699811625,  3.8391040088894437,
                                   1.269646897103325, 9.215006888576916,  6.4772976708832255,
                                   3.246269458558178, 0.0511210199435459};
  const std::vector<double> vt64 = {
      -0.1789027692424481,  -0.28818125207050604, -0.7749616998111009,  -0.5332726590950896,
      0.3871215938703837,   -0.8985113987184387,  0.13976186700464233,  0.1525803344591491,
      -0.2314069792404015,  -0.03708202130554682, -0.5045854966104311,  0.8309447696839618,
      -0.8744034999217863,  -0.32901938548360005, 0.35396957633060844,  -0.04324699218274111,
      0.6276106632546885,   -0.267287353478729,   -0.2299525871877408,  0.69410671635204,
      0.28029316975925644,  0.47811378046591546,  0.8083625695047307,   0.1984764674680803,
      0.6187014005224261,   0.4771409534394446,   -0.37406866975606345, -0.4996175715979325,
      -0.38045915857935025, 0.6872417290515942,   -0.3921025301835002,  0.4787538410571401};
  for (const std::string type : {"f32", "f64"}) {
    const bool f32 = type == "f32";
    const ElementType element = f32 ? ElementType::kF32 : ElementType::kF64;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(JaxSvdProgram(type)));
    const std::vector<Tensor> inputs = {Values(element, {2, 4, 4}, f32 ? a32 : a64)};
    const Tensor want_u = Values(element, {2, 4, 4}, f32 ? u32 : u64);
    const Tensor want_s = Values(element, {2, 4}, f32 ? s32 : s64);
    const Tensor want_vt = Values(element, {2, 4, 4}, f32 ? vt32 : vt64);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> engine, RunEngine(*module, inputs));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(*module, "main", inputs));
    const SvdShape shape{2, 4, 4, 4, 4};
    for (const auto* got : {&engine, &reference}) {
      const std::string what = StrCat(type, got == &engine ? " engine" : " reference");
      ASSERT_EQ(got->size(), 3u) << what;  // u, s, vt
      svd_test::ExpectSameSvdUpToPairSigns((*got)[1], (*got)[0], (*got)[2], want_s, want_u,
                                           want_vt, shape, f32 ? 1e-5 : 1e-13,
                                           f32 ? 2e-5 : 1e-12, what);
      svd_test::ExpectValidSvd(inputs[0], (*got)[1], (*got)[0], (*got)[2], shape,
                               f32 ? 2e-5 : 1e-12, what);
    }
  }
}

// The program JAX's _svd_cpu_gpu_lowering writes (as in JaxSvdProgram) for a [batch..., m, n] of
// `type`, full_matrices `full` and compute_uv `uv` (mode 'A', 'S' or 'N'; without compute_uv
// the program returns s alone, as jnp.linalg.svd(compute_uv=False)).
std::string SvdProgram(const std::string& type, const Dims& batch, int64_t m, int64_t n, bool full,
                       bool uv) {
  const int64_t nb = static_cast<int64_t>(batch.size()), k = std::min(m, n);
  auto tensor = [&batch](Dims last, const std::string& element) {
    std::string out = "tensor<";
    for (int64_t d : batch) out += StrCat(d, "x");
    for (int64_t d : last) out += StrCat(d, "x");
    return out + element + ">";
  };
  auto list = [](int64_t from, int64_t count) {  // "[from, ..., from + count - 1]"
    std::string out = "[";
    for (int64_t i = 0; i < count; ++i) out += StrCat(i ? ", " : "", from + i);
    return out + "]";
  };
  auto layout = [](Dims dims) {
    std::string out = "dense<";
    for (size_t i = 0; i < dims.size(); ++i) out += StrCat(i ? ", " : "[", dims[i]);
    return out + (dims.empty() ? "" : "]") + "> : tensor<" + StrCat(dims.size()) + "xindex>";
  };
  Dims matrix = {nb, nb + 1}, vector, info;
  for (int64_t d = nb - 1; d >= 0; --d) {
    matrix.push_back(d);
    info.push_back(d);
  }
  for (int64_t d = nb; d >= 0; --d) vector.push_back(d);
  const std::string a = tensor({m, n}, type), s = tensor({k}, type), i32 = tensor({}, "i32"),
                    i1 = tensor({}, "i1"), u = tensor({m, full ? m : k}, type),
                    vt = tensor({full ? n : k, n}, type);
  const std::string nan = type == "f32" ? "0x7FC00000" : "0x7FF8000000000000";
  const char mode = !uv ? 'N' : full ? 'A' : 'S';
  std::string text = StrCat(
      "func.func public @main(%arg0: ", a, ") -> (", uv ? u + ", " + s + ", " + vt : s, ") {\n",
      "  %0:5 = stablehlo.custom_call @lapack_", type == "f32" ? "s" : "d",
      "gesdd_ffi(%arg0) {mhlo.backend_config = {mode = ", static_cast<int>(mode),
      " : ui8}, operand_layouts = [", layout(matrix), "], output_operand_aliases = "
      "[#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, "
      "operand_tuple_indices = []>], result_layouts = [", layout(matrix), ", ", layout(vector),
      ", ", layout(matrix), ", ", layout(matrix), ", ", layout(info), "]} : (", a, ") -> (", a,
      ", ", s, ", ", u, ", ", vt, ", ", i32, ")\n",
      "  %c = stablehlo.constant dense<0> : tensor<i32>\n",
      "  %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> ", i32, "\n",
      "  %2 = stablehlo.compare  EQ, %0#4, %1,  SIGNED : (", i32, ", ", i32, ") -> ", i1, "\n",
      "  %cst = stablehlo.constant dense<", nan, "> : tensor<", type, ">\n");
  // One masked result: select(broadcast(ok), value, NaN), as _broadcasting_select_hlo.
  auto masked = [&](const std::string& name, const std::string& value, const std::string& shape,
                    Dims last) {
    Dims ones(last.size(), 1);
    const std::string mask = tensor(ones, "i1"), full_mask = tensor(last, "i1");
    return StrCat("  %", name, "_ok = stablehlo.broadcast_in_dim %2, dims = ", list(0, nb), " : (",
                  i1, ") -> ", mask, "\n  %", name, "_nan = stablehlo.broadcast_in_dim %cst, ",
                  "dims = [] : (tensor<", type, ">) -> ", shape, "\n  %", name,
                  "_mask = stablehlo.broadcast_in_dim %", name, "_ok, dims = ",
                  list(0, nb + static_cast<int64_t>(last.size())), " : (", mask, ") -> ",
                  full_mask, "\n  %", name, " = stablehlo.select %", name, "_mask, ", value,
                  ", %", name, "_nan : ", full_mask, ", ", shape, "\n");
  };
  text += masked("s", "%0#1", s, {k});
  if (uv) {
    text += masked("u", "%0#2", u, {m, full ? m : k});
    text += masked("vt", "%0#3", vt, {full ? n : k, n});
    return text + StrCat("  return %u, %s, %vt : ", u, ", ", s, ", ", vt, "\n}\n");
  }
  return text + StrCat("  return %s : ", s, "\n}\n");
}

TEST(LapackJaxSvdProgramsTest, EveryModeShapeAndBatchRunsAsJaxsProgram) {
  struct Case {
    Dims batch;
    int64_t m, n;
  };
  const std::vector<Case> cases = {{{}, 4, 4}, {{3}, 6, 3}, {{2, 2}, 3, 5}, {{}, 1, 7}};
  for (const std::string type : {"f32", "f64"}) {
    const bool f32 = type == "f32";
    const ElementType element = f32 ? ElementType::kF32 : ElementType::kF64;
    for (const Case& c : cases) {
      for (bool full : {true, false}) {
        for (bool uv : {true, false}) {
          const std::string text = SvdProgram(type, c.batch, c.m, c.n, full, uv);
          const std::string what =
              StrCat(type, " ", c.m, "x", c.n, " batch ", c.batch.size(), full ? " full" : "",
                     uv ? " uv" : "");
          StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
          ASSERT_TRUE(module.ok()) << module.status() << "\n" << text;
          Dims dims = c.batch;
          dims.push_back(c.m);
          dims.push_back(c.n);
          int64_t batches = 1;
          for (int64_t d : c.batch) batches *= d;
          Tensor a = Tensor::Allocate(*TensorType::Create(element, dims)).value();
          std::mt19937 rng(23);
          std::uniform_real_distribution<double> unit(-1, 1);
          for (int64_t i = 0; i < a.element_count(); ++i) a.SetFromDouble(i, unit(rng));
          ASSERT_OK_AND_ASSIGN(std::vector<Tensor> engine, RunEngine(**module, {a}));
          ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(**module, "main", std::vector<Tensor>{a}));
          ASSERT_EQ(engine.size(), uv ? 3u : 1u) << what;
          const int64_t k = std::min(c.m, c.n);
          if (!uv) {
            svd_test::ExpectSameSvdUpToPairSigns(engine[0], engine[0], engine[0], reference[0],
                                                 reference[0], reference[0],
                                                 {batches, c.m, c.n, 0, 0}, f32 ? 1e-5 : 1e-13, 0,
                                                 what);
            continue;
          }
          const SvdShape shape{batches, c.m, c.n, full ? c.m : k, full ? c.n : k};
          svd_test::ExpectSameSvdUpToPairSigns(engine[1], engine[0], engine[2], reference[1],
                                               reference[0], reference[2], shape,
                                               f32 ? 1e-5 : 1e-13, f32 ? 5e-3 : 1e-9, what);
          svd_test::ExpectValidSvd(a, engine[1], engine[0], engine[2], shape, f32 ? 2e-5 : 1e-12,
                                   what);
        }
      }
    }
  }
}

TEST(LapackJaxSvdProgramsTest, NanInOneBatchMakesOnlyThatBatchNan) {
  for (const std::string type : {"f32", "f64"}) {
    const ElementType element = type == "f32" ? ElementType::kF32 : ElementType::kF64;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                         ParseStableHlo(SvdProgram(type, {2}, 3, 2, false, true)));
    Tensor a = Tensor::Allocate(*TensorType::Create(element, {2, 3, 2})).value();
    for (int64_t i = 0; i < 12; ++i) a.SetFromDouble(i, i == 9 ? std::nan("") : i % 5 - 2.0);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> engine, RunEngine(*module, {a}));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(*module, "main", std::vector<Tensor>{a}));
    for (const auto* got : {&engine, &reference}) {
      ASSERT_EQ(got->size(), 3u);
      const Tensor& u = (*got)[0];
      const Tensor& s = (*got)[1];
      const Tensor& vt = (*got)[2];
      for (int64_t i = 0; i < 2; ++i) {
        EXPECT_FALSE(std::isnan(s.GetAsDouble(i))) << type;
        EXPECT_TRUE(std::isnan(s.GetAsDouble(2 + i))) << type;
      }
      for (int64_t i = 0; i < 6; ++i) {
        EXPECT_FALSE(std::isnan(u.GetAsDouble(i)));
        EXPECT_TRUE(std::isnan(u.GetAsDouble(6 + i)));
      }
      for (int64_t i = 0; i < 4; ++i) {
        EXPECT_FALSE(std::isnan(vt.GetAsDouble(i)));
        EXPECT_TRUE(std::isnan(vt.GetAsDouble(4 + i)));
      }
    }
  }
}

}  // namespace
}  // namespace accy
