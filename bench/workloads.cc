#include "bench/workloads.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "accy/builder.h"
#include "src/util/str_cat.h"
#include "tools/transformer_block.h"

namespace accy::bench {

namespace {

constexpr ElementType kF32 = ElementType::kF32;

// A rank-0 f32 constant broadcast to `type`.
StatusOr<Value*> Splat(FunctionBuilder& f, double value, const TensorType& type) {
  ACCY_ASSIGN_OR_RETURN(Value * scalar, f.ConstantScalar(kF32, value));
  return f.BroadcastInDim(scalar, type, {});
}

// reduce(x, reducer) over dim 1 of x [rows, cols], broadcast back to [rows, cols].
StatusOr<Value*> RowStat(FunctionBuilder& f, Value* x, const char* reducer, double init) {
  const std::vector<int64_t>& dims = x->type().dims();
  ACCY_ASSIGN_OR_RETURN(Value * start, f.ConstantScalar(kF32, init));
  ACCY_ASSIGN_OR_RETURN(TensorType row_type, TensorType::Create(kF32, {dims[0]}));
  ACCY_ASSIGN_OR_RETURN(Value * stat, f.Reduce(x, start, row_type, reducer, {1}));
  return f.BroadcastInDim(stat, x->type(), {0});
}

// Finishes `builder` (whose "main" returns `out`) into a workload.
StatusOr<Workload> Finish(std::string name, Builder& builder, FunctionBuilder& f, Value* out,
                          double flops, double bytes) {
  ACCY_RETURN_IF_ERROR(f.Return({out}));
  ACCY_RETURN_IF_ERROR(f.Finish());
  Workload workload;
  workload.name = std::move(name);
  ACCY_ASSIGN_OR_RETURN(workload.module, builder.Finish());
  workload.flops = flops;
  workload.bytes = bytes;
  return workload;
}

double Bytes(const std::vector<int64_t>& dims) {
  double n = 4;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

}  // namespace

StatusOr<Workload> BuildChain(int64_t n) {
  Builder builder("bench_chain");
  ACCY_ASSIGN_OR_RETURN(TensorType t, builder.Type(kF32, {n}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {t, t, t}, {t}));
  Value* a = f.Parameter(0);
  ACCY_ASSIGN_OR_RETURN(Value * ab, f.Multiply(a, f.Parameter(1)));
  ACCY_ASSIGN_OR_RETURN(Value * sum, f.Add(ab, f.Parameter(2)));
  ACCY_ASSIGN_OR_RETURN(Value * th, f.Tanh(sum));
  ACCY_ASSIGN_OR_RETURN(Value * half, Splat(f, 0.5, t));
  ACCY_ASSIGN_OR_RETURN(Value * scaled, f.Multiply(th, half));
  ACCY_ASSIGN_OR_RETURN(Value * out, f.Add(scaled, a));
  return Finish(StrCat("chain_", n), builder, f, out, 0, 16.0 * static_cast<double>(n));
}

StatusOr<Workload> BuildSoftmax(int64_t rows, int64_t cols) {
  Builder builder("bench_softmax");
  ACCY_ASSIGN_OR_RETURN(TensorType t, builder.Type(kF32, {rows, cols}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {t}, {t}));
  Value* x = f.Parameter(0);
  ACCY_ASSIGN_OR_RETURN(Value * max, RowStat(f, x, "max", -std::numeric_limits<double>::infinity()));
  ACCY_ASSIGN_OR_RETURN(Value * shifted, f.Subtract(x, max));
  ACCY_ASSIGN_OR_RETURN(Value * e, f.Exponential(shifted));
  ACCY_ASSIGN_OR_RETURN(Value * sum, RowStat(f, e, "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * out, f.Divide(e, sum));
  return Finish("softmax", builder, f, out, 0, 2 * Bytes({rows, cols}));
}

StatusOr<Workload> BuildLayerNorm(int64_t rows, int64_t cols) {
  Builder builder("bench_layer_norm");
  ACCY_ASSIGN_OR_RETURN(TensorType t, builder.Type(kF32, {rows, cols}));
  ACCY_ASSIGN_OR_RETURN(TensorType column, builder.Type(kF32, {cols}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f,
                        builder.BeginFunction("main", {t, column, column}, {t}));
  Value* x = f.Parameter(0);
  ACCY_ASSIGN_OR_RETURN(Value * inv_n, Splat(f, 1.0 / static_cast<double>(cols), t));
  ACCY_ASSIGN_OR_RETURN(Value * sum, RowStat(f, x, "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * mean, f.Multiply(sum, inv_n));
  ACCY_ASSIGN_OR_RETURN(Value * centered, f.Subtract(x, mean));
  ACCY_ASSIGN_OR_RETURN(Value * squared, f.Multiply(centered, centered));
  ACCY_ASSIGN_OR_RETURN(Value * square_sum, RowStat(f, squared, "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * variance, f.Multiply(square_sum, inv_n));
  ACCY_ASSIGN_OR_RETURN(Value * eps, Splat(f, 1e-5, t));
  ACCY_ASSIGN_OR_RETURN(Value * shifted, f.Add(variance, eps));
  ACCY_ASSIGN_OR_RETURN(Value * rstd, f.Rsqrt(shifted));
  ACCY_ASSIGN_OR_RETURN(Value * normalized, f.Multiply(centered, rstd));
  ACCY_ASSIGN_OR_RETURN(Value * gamma, f.BroadcastInDim(f.Parameter(1), t, {1}));
  ACCY_ASSIGN_OR_RETURN(Value * beta, f.BroadcastInDim(f.Parameter(2), t, {1}));
  ACCY_ASSIGN_OR_RETURN(Value * scaled, f.Multiply(normalized, gamma));
  ACCY_ASSIGN_OR_RETURN(Value * out, f.Add(scaled, beta));
  return Finish("layer_norm", builder, f, out, 0, 2 * Bytes({rows, cols}));
}

StatusOr<Workload> BuildMatmul(int64_t m, int64_t n, int64_t k) {
  Builder builder("bench_matmul");
  ACCY_ASSIGN_OR_RETURN(TensorType lhs, builder.Type(kF32, {m, k}));
  ACCY_ASSIGN_OR_RETURN(TensorType rhs, builder.Type(kF32, {k, n}));
  ACCY_ASSIGN_OR_RETURN(TensorType out_type, builder.Type(kF32, {m, n}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {lhs, rhs}, {out_type}));
  ACCY_ASSIGN_OR_RETURN(Value * out,
                        f.DotGeneral(f.Parameter(0), f.Parameter(1), out_type, {1}, {0}, {}, {}));
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return Finish(StrCat("matmul_", m, "x", n, "x", k), builder, f, out, flops,
                Bytes({m, k}) + Bytes({k, n}) + Bytes({m, n}));
}

StatusOr<Workload> BuildMlp(int64_t batch) {
  const int64_t widths[] = {784, 512, 512, 10};
  Builder builder("bench_mlp");
  std::vector<TensorType> params;
  ACCY_ASSIGN_OR_RETURN(TensorType x_type, builder.Type(kF32, {batch, widths[0]}));
  params.push_back(x_type);
  double bytes = Bytes({batch, widths[0]}) + Bytes({batch, widths[3]});
  double flops = 0;
  for (int layer = 0; layer < 3; ++layer) {
    ACCY_ASSIGN_OR_RETURN(TensorType w, builder.Type(kF32, {widths[layer], widths[layer + 1]}));
    ACCY_ASSIGN_OR_RETURN(TensorType b, builder.Type(kF32, {widths[layer + 1]}));
    params.push_back(w);
    params.push_back(b);
    bytes += Bytes(w.dims()) + Bytes(b.dims());
    flops += 2.0 * static_cast<double>(batch * widths[layer] * widths[layer + 1]);
  }
  ACCY_ASSIGN_OR_RETURN(TensorType out_type, builder.Type(kF32, {batch, widths[3]}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", params, {out_type}));
  Value* h = f.Parameter(0);
  for (int layer = 0; layer < 3; ++layer) {
    ACCY_ASSIGN_OR_RETURN(TensorType t, builder.Type(kF32, {batch, widths[layer + 1]}));
    ACCY_ASSIGN_OR_RETURN(Value * dot,
                          f.DotGeneral(h, f.Parameter(1 + 2 * layer), t, {1}, {0}, {}, {}));
    ACCY_ASSIGN_OR_RETURN(Value * bias, f.BroadcastInDim(f.Parameter(2 + 2 * layer), t, {1}));
    ACCY_ASSIGN_OR_RETURN(h, f.Add(dot, bias));
    if (layer < 2) {
      ACCY_ASSIGN_OR_RETURN(Value * zero, Splat(f, 0.0, t));
      ACCY_ASSIGN_OR_RETURN(h, f.Maximum(h, zero));
    }
  }
  return Finish(StrCat("mlp_b", batch), builder, f, h, flops, bytes);
}

StatusOr<Workload> BuildReduce(std::vector<int64_t> dims, std::string_view reducer) {
  if (dims.empty() || (reducer != "sum" && reducer != "max")) {
    return Status(absl::StatusCode::kInvalidArgument,
                  StrCat("BuildReduce: want rank >= 1 and reducer sum or max, got rank ",
                         dims.size(), " and '", reducer, "'"));
  }
  Builder builder("bench_reduce");
  std::vector<int64_t> out_dims(dims.begin(), dims.end() - 1);
  ACCY_ASSIGN_OR_RETURN(TensorType x_type, builder.Type(kF32, dims));
  ACCY_ASSIGN_OR_RETURN(TensorType out_type, builder.Type(kF32, out_dims));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {x_type}, {out_type}));
  const double init = reducer == "sum" ? 0.0 : -std::numeric_limits<double>::infinity();
  ACCY_ASSIGN_OR_RETURN(Value * start, f.ConstantScalar(kF32, init));
  ACCY_ASSIGN_OR_RETURN(Value * out,
                        f.Reduce(f.Parameter(0), start, out_type, reducer,
                                 {static_cast<int64_t>(dims.size()) - 1}));
  return Finish(StrCat("reduce_", reducer), builder, f, out, 0, Bytes(dims) + Bytes(out_dims));
}

StatusOr<Workload> BuildBlock(int64_t seq) {
  tools::TransformerBlockConfig config;
  config.seq = seq;
  ACCY_ASSIGN_OR_RETURN(tools::TransformerBlock block, tools::BuildTransformerBlock(config));
  Workload workload;
  workload.name = StrCat("block_s", seq);
  workload.module = std::move(block.module);
  workload.flops = block.matmul_flops;
  for (const Tensor& input : block.inputs) workload.bytes += static_cast<double>(input.byte_size());
  workload.bytes += Bytes({seq, config.d_model});
  return workload;
}

StatusOr<Workload> BuildSort(std::vector<int64_t> dims, int64_t dimension) {
  Builder builder("bench_sort");
  ACCY_ASSIGN_OR_RETURN(TensorType t, builder.Type(kF32, dims));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {t}, {t}));
  auto jax_less = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    std::vector<Value*> canonical;
    for (int side = 0; side < 2; ++side) {
      ACCY_ASSIGN_OR_RETURN(Value * zero, b.ConstantScalar(kF32, 0.0));
      ACCY_ASSIGN_OR_RETURN(Value * is_zero, b.Compare(a[side], zero, "EQ", "FLOAT"));
      ACCY_ASSIGN_OR_RETURN(Value * no_minus_zero, b.Select(is_zero, zero, a[side]));
      ACCY_ASSIGN_OR_RETURN(Value * is_nan, b.Compare(a[side], a[side], "NE", "FLOAT"));
      ACCY_ASSIGN_OR_RETURN(Value * nan, b.ConstantScalar(kF32, std::nan("")));
      ACCY_ASSIGN_OR_RETURN(Value * value, b.Select(is_nan, nan, no_minus_zero));
      canonical.push_back(value);
    }
    ACCY_ASSIGN_OR_RETURN(Value * less, b.Compare(canonical[0], canonical[1], "LT", "TOTALORDER"));
    return b.Return({less});
  };
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> sorted,
                        f.Sort({f.Parameter(0)}, dimension, jax_less, /*is_stable=*/true));
  const std::string name = dims.size() == 1 ? "sort_1m" : "sort_rows";
  return Finish(name, builder, f, sorted[0], 0, 2 * Bytes(dims));
}

StatusOr<Workload> BuildTopK(int64_t rows, int64_t cols, int64_t k) {
  Builder builder("bench_top_k");
  ACCY_ASSIGN_OR_RETURN(TensorType x, builder.Type(kF32, {rows, cols}));
  ACCY_ASSIGN_OR_RETURN(TensorType values, builder.Type(kF32, {rows, k}));
  ACCY_ASSIGN_OR_RETURN(TensorType indices, builder.Type(ElementType::kI32, {rows, k}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {x}, {values, indices}));
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> top, f.TopK(f.Parameter(0), k));
  ACCY_RETURN_IF_ERROR(f.Return(top));
  ACCY_RETURN_IF_ERROR(f.Finish());
  Workload workload;
  workload.name = "top_k";
  ACCY_ASSIGN_OR_RETURN(workload.module, builder.Finish());
  workload.bytes = Bytes({rows, cols}) + 2 * Bytes({rows, k});
  return workload;
}

StatusOr<Workload> BuildNamedWorkload(std::string_view name) {
  if (name == "chain_4m") return BuildChain(int64_t{1} << 22);
  if (name == "softmax") return BuildSoftmax(4096, 1024);
  if (name == "layer_norm") return BuildLayerNorm(4096, 1024);
  if (name == "matmul_1024") return BuildMatmul(1024, 1024, 1024);
  if (name == "block_s128") return BuildBlock(128);
  if (name == "mlp_b64") return BuildMlp(64);
  if (name == "sort_1m") return BuildSort({int64_t{1} << 20}, 0);
  if (name == "sort_rows") return BuildSort({4096, 1024}, 1);
  if (name == "top_k") return BuildTopK(4096, 1024, 8);
  return Status(absl::StatusCode::kNotFound,
                StrCat("unknown workload '", name,
                       "'; known: chain_4m softmax layer_norm matmul_1024 block_s128 mlp_b64 "
                       "sort_1m sort_rows top_k"));
}

std::vector<Tensor> DeterministicInputs(const Module& module, uint32_t seed) {
  const Function& main = *module.FindFunction("main");
  std::mt19937 rng(seed);
  std::vector<Tensor> inputs;
  for (size_t p = 0; p < main.parameter_types().size(); ++p) {
    const TensorType& type = main.parameter_types()[p];
    Tensor tensor = *Tensor::Allocate(type);
    float* data = tensor.data_as<float>();
    const double scale =
        p > 0 && type.rank() == 2 ? 1.0 / std::sqrt(static_cast<double>(type.dims()[0])) : 1.0;
    for (int64_t i = 0; i < type.element_count(); ++i) {
      const double u = static_cast<double>(rng()) / 4294967296.0;  // [0, 1)
      data[i] = static_cast<float>((2 * u - 1) * scale);
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

std::vector<Tensor> AllocateOutputs(const Module& module) {
  std::vector<Tensor> outputs;
  for (const TensorType& type : module.FindFunction("main")->result_types()) {
    outputs.push_back(*Tensor::Filled(type, 0.0));
  }
  return outputs;
}

}  // namespace accy::bench
