// The benchmark workloads, built once here with the public builder API and shared by accy-bench
// (bench/bench_*.cc) and the peer-comparison runner (bench/compare/accy_compare_runner.cc), so
// that both time exactly the same programs. Each builder returns a module with one function
// "main" plus the work it does per run (FLOPs, minimal memory traffic) for throughput counters.
// Inputs come either from DeterministicInputs (accy-bench) or from .npy files written by
// bench/compare/compare.py (the runner). Builders are pure functions; thread-compatible.
#ifndef ACCY_BENCH_WORKLOADS_H_
#define ACCY_BENCH_WORKLOADS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"

namespace accy::bench {

struct Workload {
  std::string name;                // "chain_4m", "block_s128", ...
  std::unique_ptr<Module> module;  // function "main"
  // Useful floating-point operations per run: 2*m*n*k summed over matmuls (0 for workloads
  // measured in bytes).
  double flops = 0;
  // Bytes a run must move at least: every input read once and every output written once.
  double bytes = 0;
};

// y = tanh(a*b + c) * 0.5 + a over three f32 [n] inputs (the fused-chain workload).
StatusOr<Workload> BuildChain(int64_t n);
// Row-wise softmax over the last dim of x f32 [rows, cols] (max-subtracted, as torch.softmax).
StatusOr<Workload> BuildSoftmax(int64_t rows, int64_t cols);
// Layer norm over the last dim of x f32 [rows, cols], eps 1e-5, then * gamma [cols] + beta
// [cols] (torch.nn.functional.layer_norm semantics: biased variance).
StatusOr<Workload> BuildLayerNorm(int64_t rows, int64_t cols);
// [m, k] x [k, n] f32 dot_general.
StatusOr<Workload> BuildMatmul(int64_t m, int64_t n, int64_t k);
// MLP 784-512-512-10 at `batch`: x [batch, 784], then (w [in, out], b [out]) per layer,
// relu between layers (not after the last). Parameters: x, w1, b1, w2, b2, w3, b3.
StatusOr<Workload> BuildMlp(int64_t batch);
// A reduce of x f32 `dims` over its last dim with reducer "sum" or "max" (rank 1: to a scalar).
StatusOr<Workload> BuildReduce(std::vector<int64_t> dims, std::string_view reducer);
// The transformer block of `accy demo` (tools/transformer_block.h) at sequence `seq`, GPT-2-small
// sizes. Parameters: x [seq, 768], then the weights in TransformerBlock::parameter_names order.
StatusOr<Workload> BuildBlock(int64_t seq);

// A stable ascending sort of x f32 `dims` along `dimension` with the comparator jax.numpy.sort
// exports (both sides canonicalized: -0 -> +0, every NaN -> +NaN, then `compare LT,
// TOTALORDER`; testdata/sort_float32_5.mlir of the conformance suite).
StatusOr<Workload> BuildSort(std::vector<int64_t> dims, int64_t dimension);
// chlo.top_k of x f32 [rows, cols]: the k largest of each row, largest first, and their
// indices (results: values f32 [rows, k], indices i32 [rows, k]).
StatusOr<Workload> BuildTopK(int64_t rows, int64_t cols, int64_t k);

// The workloads of bench/compare by name: chain_4m, softmax, layer_norm, matmul_1024,
// block_s128, mlp_b64, sort_1m (BuildSort of [2^20]), sort_rows ([4096, 1024] along dim 1),
// top_k (k = 8 of [4096, 1024]). kNotFound listing the known names otherwise.
StatusOr<Workload> BuildNamedWorkload(std::string_view name);

// One owned input tensor per f32 parameter of "main", filled from a fixed-seed std::mt19937 with
// values uniform in [-1, 1); parameters after the first that are matrices (rank 2) are scaled by
// 1/sqrt(dims[0]) (their fan-in) so that matmul chains stay O(1). Deterministic.
std::vector<Tensor> DeterministicInputs(const Module& module, uint32_t seed = 1234);

// Freshly allocated output tensors, one per result of "main", zero-filled (first-touched).
std::vector<Tensor> AllocateOutputs(const Module& module);

}  // namespace accy::bench

#endif  // ACCY_BENCH_WORKLOADS_H_
