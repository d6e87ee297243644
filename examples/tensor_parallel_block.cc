// Example: a Megatron-style tensor-parallel transformer block on 2 processes joined by Gloo.
//   build/bin/example_tensor_parallel_block
// Run without arguments, it starts 2 copies of itself (ranks 0 and 1 of a grid of 1 replica x 2
// partitions, mhlo.num_partitions = 2) and waits for them. The block (sequence 16, model width
// 64, 4 heads of 16, MLP width 256, no layer norms) is split as Megatron-LM splits it:
//   attention  Q, K, V column-parallel (each partition computes 2 of the 4 heads), the output
//              projection row-parallel, then all_reduce over the partitions
//   MLP        up-projection column-parallel (128 of 256 hidden units each, relu), down-projection
//              row-parallel, then all_reduce
// with both residuals. The all_reduces are written as JAX's shard_map exports them: a channel
// and use_global_device_ids (docs/collectives.md: flattened_ids). Every partition's output must
// match the same block on one process with the whole weights (num_partitions = 1) within 1e-5,
// and the two partitions' outputs must be bitwise equal. Exit 0 when both hold.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "accy/collectives.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "examples/spmd_example_util.h"

namespace {

using accy_examples::F32Tensor;
using accy_examples::Uniform;

constexpr int kPartitions = 2;
constexpr int kSeq = 16, kModel = 64, kHeads = 4, kHeadDim = 16, kMlp = 256;

std::string T(std::vector<int> dims, const char* element = "f32") {
  std::string s = "tensor<";
  for (int d : dims) s += std::to_string(d) + "x";
  return s + element + ">";
}

// The block for one of `partitions` partitions: `heads` heads and `mlp` hidden units each.
std::string Block(int partitions) {
  const int heads = kHeads / partitions, mlp = kMlp / partitions, width = heads * kHeadDim;
  const std::string X = T({kSeq, kModel}), Wc = T({kModel, width}), Wr = T({width, kModel}),
                    Qs = T({kSeq, width}), Q3 = T({kSeq, heads, kHeadDim}),
                    Qh = T({heads, kSeq, kHeadDim}), Sc = T({heads, kSeq, kSeq}),
                    Rw = T({heads, kSeq}), W1 = T({kModel, mlp}), W2 = T({mlp, kModel}),
                    U = T({kSeq, mlp});
  std::string groups = "[[";
  for (int p = 0; p < partitions; ++p) groups += (p > 0 ? ", " : "") + std::to_string(p);
  groups += "]]";
  auto all_reduce = [&](const std::string& out, const std::string& in) {
    return "    " + out + " = \"stablehlo.all_reduce\"(" + in +
           ") ({\n      ^bb0(%l: tensor<f32>, %r: tensor<f32>):\n"
           "        %t = stablehlo.add %l, %r : tensor<f32>\n"
           "        stablehlo.return %t : tensor<f32>\n    }) {channel_handle = "
           "#stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<" +
           groups + "> : tensor<1x" + std::to_string(partitions) +
           "xi64>, use_global_device_ids} : (" + X + ") -> " + X + "\n";
  };
  auto heads_of = [&](const std::string& out, const std::string& w) {
    return "    " + out + "_p = stablehlo.dot_general %x, " + w +
           ", contracting_dims = [1] x [0] : (" + X + ", " + Wc + ") -> " + Qs + "\n    " + out +
           "_r = stablehlo.reshape " + out + "_p : (" + Qs + ") -> " + Q3 + "\n    " + out +
           " = stablehlo.transpose " + out + "_r, dims = [1, 0, 2] : (" + Q3 + ") -> " + Qh + "\n";
  };
  std::string text = "module @tp attributes {mhlo.num_partitions = " +
                     std::to_string(partitions) + " : i32, mhlo.num_replicas = 1 : i32} {\n"
                     "  func.func @main(%x: " + X + ", %wq: " + Wc + ", %wk: " + Wc + ", %wv: " +
                     Wc + ", %wo: " + Wr + ", %w1: " + W1 + ", %w2: " + W2 + ") -> " + X + " {\n";
  text += heads_of("%q", "%wq") + heads_of("%k", "%wk") + heads_of("%v", "%wv");
  text += "    %s0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = "
          "[2] x [2] : (" + Qh + ", " + Qh + ") -> " + Sc + "\n";
  text += "    %scale = stablehlo.constant dense<0.25> : " + Sc + "\n";  // 1 / sqrt(16)
  text += "    %s = stablehlo.multiply %s0, %scale : " + Sc + "\n";
  text += "    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n";
  text += "    %zero = stablehlo.constant dense<0.0> : tensor<f32>\n";
  text += "    %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = "
          "[2] : (" + Sc + ", tensor<f32>) -> " + Rw + "\n";
  text += "    %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (" + Rw + ") -> " + Sc + "\n";
  text += "    %sm = stablehlo.subtract %s, %mb : " + Sc + "\n";
  text += "    %e = stablehlo.exponential %sm : " + Sc + "\n";
  text += "    %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = "
          "[2] : (" + Sc + ", tensor<f32>) -> " + Rw + "\n";
  text += "    %sumb = stablehlo.broadcast_in_dim %sum, dims = [0, 1] : (" + Rw + ") -> " + Sc + "\n";
  text += "    %pr = stablehlo.divide %e, %sumb : " + Sc + "\n";
  text += "    %c = stablehlo.dot_general %pr, %v, batching_dims = [0] x [0], contracting_dims = "
          "[2] x [1] : (" + Sc + ", " + Qh + ") -> " + Qh + "\n";
  text += "    %ct = stablehlo.transpose %c, dims = [1, 0, 2] : (" + Qh + ") -> " + Q3 + "\n";
  text += "    %cr = stablehlo.reshape %ct : (" + Q3 + ") -> " + Qs + "\n";
  text += "    %o_p = stablehlo.dot_general %cr, %wo, contracting_dims = [1] x [0] : (" + Qs + ", " +
          Wr + ") -> " + X + "\n";
  text += all_reduce("%o", "%o_p");
  text += "    %h = stablehlo.add %x, %o : " + X + "\n";
  text += "    %u0 = stablehlo.dot_general %h, %w1, contracting_dims = [1] x [0] : (" + X + ", " +
          W1 + ") -> " + U + "\n";
  text += "    %zu = stablehlo.constant dense<0.0> : " + U + "\n";
  text += "    %u = stablehlo.maximum %u0, %zu : " + U + "\n";
  text += "    %d_p = stablehlo.dot_general %u, %w2, contracting_dims = [1] x [0] : (" + U + ", " +
          W2 + ") -> " + X + "\n";
  text += all_reduce("%d", "%d_p");
  text += "    %y = stablehlo.add %h, %d : " + X + "\n    return %y : " + X + "\n  }\n}\n";
  return text;
}


// Columns [first, first + count) of a row-major [rows, columns] matrix.
std::vector<float> Columns(const std::vector<float>& m, int rows, int columns, int first,
                           int count) {
  std::vector<float> out;
  for (int r = 0; r < rows; ++r) {
    out.insert(out.end(), m.begin() + r * columns + first, m.begin() + r * columns + first + count);
  }
  return out;
}
// Rows [first, first + count).
std::vector<float> Rows(const std::vector<float>& m, int columns, int first, int count) {
  return std::vector<float>(m.begin() + first * columns, m.begin() + (first + count) * columns);
}


// Runs the block as partition `partition` of `partitions` (the whole weights when 1).
accy::StatusOr<std::vector<float>> RunBlock(int partitions, int partition,
                                            accy::Communicator* communicator) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<accy::Module> module,
                        accy::ParseStableHlo(Block(partitions)));
  accy::EngineOptions options;
  options.num_threads = 1;
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<accy::Engine> engine, accy::Engine::Create(options));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<accy::Executable> block, engine->Compile(*module, "main"));
  const int width = kHeads * kHeadDim / partitions, mlp = kMlp / partitions;
  const std::vector<float> x = Uniform(size_t{kSeq} * kModel, 3, 1.0f);
  std::vector<accy::Tensor> inputs = {F32Tensor({kSeq, kModel}, x)};
  // Q, K, V and the up-projection split by columns (this partition's heads / hidden units),
  // the output and down-projections by rows.
  for (uint32_t seed : {5u, 7u, 9u}) {
    const std::vector<float> w = Uniform(size_t{kModel} * kModel, seed, 0.15f);
    inputs.push_back(F32Tensor({kModel, width},
                            Columns(w, kModel, kModel, partition * width, width)));
  }
  const std::vector<float> wo = Uniform(size_t{kModel} * kModel, 11, 0.15f);
  inputs.push_back(F32Tensor({width, kModel}, Rows(wo, kModel, partition * width, width)));
  const std::vector<float> w1 = Uniform(size_t{kModel} * kMlp, 13, 0.15f);
  inputs.push_back(F32Tensor({kModel, mlp}, Columns(w1, kModel, kMlp, partition * mlp, mlp)));
  const std::vector<float> w2 = Uniform(size_t{kMlp} * kModel, 17, 0.08f);
  inputs.push_back(F32Tensor({mlp, kModel}, Rows(w2, kModel, partition * mlp, mlp)));
  accy::RunOptions run;
  run.communicator = communicator;
  ACCY_ASSIGN_OR_RETURN(std::vector<accy::Tensor> out, block->Run(inputs, run));
  const float* y = static_cast<const float*>(out[0].data());
  return std::vector<float>(y, y + kSeq * kModel);
}

int Rank() {
  accy::StatusOr<accy::GlooOptions> options = accy::GlooOptionsFromEnvironment();
  if (!options.ok()) {
    std::fprintf(stderr, "%s\n", std::string(options.status().message()).c_str());
    return 1;
  }
  const int rank = options->rank;  // = partition id (one replica)
  auto communicator = accy::CreateGlooCommunicator(*options);
  if (!communicator.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, std::string(communicator.status().message()).c_str());
    return 1;
  }
  accy::StatusOr<std::vector<float>> y = RunBlock(kPartitions, rank, communicator->get());
  if (!y.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, std::string(y.status().message()).c_str());
    return 1;
  }
  std::vector<float> both(y->size() * kPartitions);
  const std::vector<int> world = {0, 1};
  accy::Status gathered = (*communicator)->AllGather(
      world, y->data(), static_cast<int64_t>(y->size() * sizeof(float)), both.data());
  if (!gathered.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, std::string(gathered.message()).c_str());
    return 1;
  }
  if (rank != 0) return 0;
  if (std::memcmp(both.data(), both.data() + y->size(), y->size() * sizeof(float)) != 0) {
    std::printf("FAIL: the two partitions' outputs differ\n");
    return 1;
  }
  accy::StatusOr<std::vector<float>> single = RunBlock(1, 0, nullptr);
  if (!single.ok()) {
    std::fprintf(stderr, "%s\n", std::string(single.status().message()).c_str());
    return 1;
  }
  double worst = 0, largest = 0;
  for (size_t i = 0; i < y->size(); ++i) {
    worst = std::max(worst, std::abs(double((*y)[i]) - double((*single)[i])));
    largest = std::max(largest, std::abs(double((*single)[i])));
  }
  std::printf("2 partitions: outputs bitwise equal across partitions; max |tensor-parallel - "
              "single process| = %.3g (largest |y| %.3g, tolerance 1e-5)\n",
              worst, largest);
  return worst <= 1e-5 ? 0 : 1;
}

}  // namespace

int main() {
  return std::getenv("ACCY_WORLD_SIZE") != nullptr
             ? Rank()
             : accy_examples::LaunchRanks(kPartitions, "example_tensor_parallel_block");
}
