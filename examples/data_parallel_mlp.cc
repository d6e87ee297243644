// Example: data-parallel training of an MLP on 4 processes joined by Gloo over TCP loopback.
//   build/bin/example_data_parallel_mlp
// Run without arguments, it starts 4 copies of itself (ranks 0-3: ACCY_RANK, ACCY_WORLD_SIZE,
// ACCY_RENDEZVOUS=file:<temporary folder>), exactly as mpirun or a shell loop would, and waits
// for them. Each rank holds a quarter of a 32-example batch and runs 3 SGD steps of a StableHLO
// training step (forward, softmax cross-entropy, backward, all_reduce of the gradients and the
// loss across the 4 replicas, SGD update; mhlo.num_replicas = 4) through the engine with its
// Gloo communicator (include/accy/collectives.h). Rank 0 then checks that every rank holds
// bitwise the same weights (gathered with the communicator), and that they match the same 3
// steps on the whole batch in one process (num_replicas = 1) within 1e-5. Exit 0 when both hold.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "accy/collectives.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "examples/spmd_example_util.h"

namespace {

using accy_examples::F32Tensor;
using accy_examples::Uniform;

constexpr int kReplicas = 4;
constexpr int kBatch = 32;  // the whole batch; each rank holds kBatch / kReplicas rows
constexpr int kIn = 64, kHidden = 32, kOut = 10, kSteps = 3;
constexpr double kLearningRate = 0.5;

std::string T(std::vector<int> dims) {
  std::string s = "tensor<";
  for (int d : dims) s += std::to_string(d) + "x";
  return s + "f32>";
}

// The training step on `batch` rows per replica, `replicas` replicas (StableHLO text, as JAX
// would export a pmapped step).
std::string TrainStep(int batch, int replicas) {
  const std::string X = T({batch, kIn}), Y = T({batch, kOut}), W1 = T({kIn, kHidden}),
                    B1 = T({kHidden}), W2 = T({kHidden, kOut}), B2 = T({kOut}),
                    Hd = T({batch, kHidden}), S = "tensor<f32>", R = T({batch});
  std::string groups = "[[";
  for (int r = 0; r < replicas; ++r) groups += (r > 0 ? ", " : "") + std::to_string(r);
  groups += "]]";
  auto all_reduce = [&](const std::string& out, const std::string& in, const std::string& type) {
    return "    " + out + " = \"stablehlo.all_reduce\"(" + in +
           ") ({\n      ^bb0(%l: tensor<f32>, %r: tensor<f32>):\n"
           "        %t = stablehlo.add %l, %r : tensor<f32>\n"
           "        stablehlo.return %t : tensor<f32>\n    }) {replica_groups = dense<" +
           groups + "> : tensor<1x" + std::to_string(replicas) + "xi64>} : (" + type + ") -> " +
           type + "\n";
  };
  auto sgd = [&](const std::string& out, const std::string& w, const std::string& g,
                 const std::string& type) {
    // w - (lr / replicas) * sum of the replicas' mean gradients = w - lr * mean over the batch.
    return "    " + out + "_c = stablehlo.constant dense<" +
           std::to_string(kLearningRate / replicas) + "> : " + type + "\n    " + out +
           "_u = stablehlo.multiply " + g + ", " + out + "_c : " + type + "\n    " + out +
           " = stablehlo.subtract " + w + ", " + out + "_u : " + type + "\n";
  };
  const std::string inv_batch = std::to_string(1.0 / batch);
  std::string text = "module @dp attributes {mhlo.num_replicas = " + std::to_string(replicas) +
                     " : i32} {\n  func.func @main(%w1: " + W1 + ", %b1: " + B1 + ", %w2: " + W2 +
                     ", %b2: " + B2 + ", %x: " + X + ", %y: " + Y + ") -> (" + W1 + ", " + B1 +
                     ", " + W2 + ", " + B2 + ", " + S + ") {\n";
  text += "    %h0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (" + X + ", " +
          W1 + ") -> " + Hd + "\n";
  text += "    %b1b = stablehlo.broadcast_in_dim %b1, dims = [1] : (" + B1 + ") -> " + Hd + "\n";
  text += "    %h = stablehlo.add %h0, %b1b : " + Hd + "\n";
  text += "    %zh = stablehlo.constant dense<0.0> : " + Hd + "\n";
  text += "    %a = stablehlo.maximum %h, %zh : " + Hd + "\n";
  text += "    %z0 = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (" + Hd + ", " +
          W2 + ") -> " + Y + "\n";
  text += "    %b2b = stablehlo.broadcast_in_dim %b2, dims = [1] : (" + B2 + ") -> " + Y + "\n";
  text += "    %z = stablehlo.add %z0, %b2b : " + Y + "\n";
  // Softmax cross-entropy: loss = -mean over rows of sum(y * log_softmax(z)).
  text += "    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n";
  text += "    %zero = stablehlo.constant dense<0.0> : tensor<f32>\n";
  text += "    %m = stablehlo.reduce(%z init: %ninf) applies stablehlo.maximum across dimensions = "
          "[1] : (" + Y + ", tensor<f32>) -> " + R + "\n";
  text += "    %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (" + R + ") -> " + Y + "\n";
  text += "    %zs = stablehlo.subtract %z, %mb : " + Y + "\n";
  text += "    %e = stablehlo.exponential %zs : " + Y + "\n";
  text += "    %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] "
          ": (" + Y + ", tensor<f32>) -> " + R + "\n";
  text += "    %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (" + R + ") -> " + Y + "\n";
  text += "    %p = stablehlo.divide %e, %sb : " + Y + "\n";
  text += "    %ls = stablehlo.log %sb : " + Y + "\n";
  text += "    %logp = stablehlo.subtract %zs, %ls : " + Y + "\n";
  text += "    %yl = stablehlo.multiply %y, %logp : " + Y + "\n";
  text += "    %nll = stablehlo.reduce(%yl init: %zero) applies stablehlo.add across dimensions = "
          "[0, 1] : (" + Y + ", tensor<f32>) -> tensor<f32>\n";
  text += "    %ninvb = stablehlo.constant dense<-" + inv_batch + "> : tensor<f32>\n";
  text += "    %loss_local = stablehlo.multiply %nll, %ninvb : tensor<f32>\n";
  // Backward: dz = (p - y) / batch.
  text += "    %d = stablehlo.subtract %p, %y : " + Y + "\n";
  text += "    %invb = stablehlo.constant dense<" + inv_batch + "> : " + Y + "\n";
  text += "    %dz = stablehlo.multiply %d, %invb : " + Y + "\n";
  text += "    %dw2 = stablehlo.dot_general %a, %dz, contracting_dims = [0] x [0] : (" + Hd + ", " +
          Y + ") -> " + W2 + "\n";
  text += "    %db2 = stablehlo.reduce(%dz init: %zero) applies stablehlo.add across dimensions = "
          "[0] : (" + Y + ", tensor<f32>) -> " + B2 + "\n";
  text += "    %da = stablehlo.dot_general %dz, %w2, contracting_dims = [1] x [1] : (" + Y + ", " +
          W2 + ") -> " + Hd + "\n";
  text += "    %pos = stablehlo.compare GT, %h, %zh : (" + Hd + ", " + Hd + ") -> tensor<" +
          std::to_string(batch) + "x" + std::to_string(kHidden) + "xi1>\n";
  text += "    %dh = stablehlo.select %pos, %da, %zh : (tensor<" + std::to_string(batch) + "x" +
          std::to_string(kHidden) + "xi1>, " + Hd + ", " + Hd + ") -> " + Hd + "\n";
  text += "    %dw1 = stablehlo.dot_general %x, %dh, contracting_dims = [0] x [0] : (" + X + ", " +
          Hd + ") -> " + W1 + "\n";
  text += "    %db1 = stablehlo.reduce(%dh init: %zero) applies stablehlo.add across dimensions = "
          "[0] : (" + Hd + ", tensor<f32>) -> " + B1 + "\n";
  // The replicas' gradients and losses summed (each is a mean over its own rows).
  text += all_reduce("%gw1", "%dw1", W1) + all_reduce("%gb1", "%db1", B1) +
          all_reduce("%gw2", "%dw2", W2) + all_reduce("%gb2", "%db2", B2) +
          all_reduce("%gl", "%loss_local", S);
  text += sgd("%w1n", "%w1", "%gw1", W1) + sgd("%b1n", "%b1", "%gb1", B1) +
          sgd("%w2n", "%w2", "%gw2", W2) + sgd("%b2n", "%b2", "%gb2", B2);
  text += "    %invr = stablehlo.constant dense<" + std::to_string(1.0 / replicas) +
          "> : tensor<f32>\n    %loss = stablehlo.multiply %gl, %invr : tensor<f32>\n";
  text += "    return %w1n, %b1n, %w2n, %b2n, %loss : " + W1 + ", " + B1 + ", " + W2 + ", " + B2 +
          ", tensor<f32>\n  }\n}\n";
  return text;
}

// Deterministic data: inputs in [-1, 1), labels one-hot of a rule the MLP can learn.
struct Data {
  std::vector<float> x, y;  // [kBatch, kIn], [kBatch, kOut]
};
Data MakeData() {
  Data d{Uniform(size_t{kBatch} * kIn, 7, 1.0f), std::vector<float>(size_t{kBatch} * kOut, 0.0f)};
  for (int b = 0; b < kBatch; ++b) {
    float best = -1e30f;
    int label = 0;
    for (int o = 0; o < kOut; ++o) {
      const float score = d.x[static_cast<size_t>(b * kIn + o)];
      if (score > best) best = score, label = o;
    }
    d.y[static_cast<size_t>(b * kOut + label)] = 1.0f;
  }
  return d;
}

// kSteps SGD steps of the program for `replicas` replicas on rows [first, first + rows);
// returns the final weights (w1, b1, w2, b2 concatenated) and prints the losses when asked.
accy::StatusOr<std::vector<float>> Train(int replicas, int first, int rows,
                                         accy::Communicator* communicator, bool print) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<accy::Module> module,
                        accy::ParseStableHlo(TrainStep(rows, replicas)));
  accy::EngineOptions options;
  options.num_threads = 1;
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<accy::Engine> engine, accy::Engine::Create(options));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<accy::Executable> step, engine->Compile(*module, "main"));
  const Data data = MakeData();
  std::vector<accy::Tensor> state = {
      F32Tensor({kIn, kHidden}, Uniform(size_t{kIn} * kHidden, 11, 0.2f)),
      F32Tensor({kHidden}, std::vector<float>(kHidden, 0.0f)),
      F32Tensor({kHidden, kOut}, Uniform(size_t{kHidden} * kOut, 13, 0.3f)),
      F32Tensor({kOut}, std::vector<float>(kOut, 0.0f))};
  const accy::Tensor x = F32Tensor(
      {rows, kIn}, std::vector<float>(data.x.begin() + first * kIn,
                                      data.x.begin() + (first + rows) * kIn));
  const accy::Tensor y = F32Tensor(
      {rows, kOut}, std::vector<float>(data.y.begin() + first * kOut,
                                       data.y.begin() + (first + rows) * kOut));
  accy::RunOptions run;
  run.communicator = communicator;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<accy::Tensor> inputs = state;
    inputs.push_back(x);
    inputs.push_back(y);
    ACCY_ASSIGN_OR_RETURN(std::vector<accy::Tensor> out, step->Run(inputs, run));
    if (print) {
      std::printf("step %d: loss %.6f\n", s, *static_cast<const float*>(out[4].data()));
    }
    state.assign(out.begin(), out.begin() + 4);
  }
  std::vector<float> weights;
  for (const accy::Tensor& t : state) {
    const float* p = static_cast<const float*>(t.data());
    weights.insert(weights.end(), p, p + t.type().element_count());
  }
  return weights;
}

int Rank() {
  accy::StatusOr<accy::GlooOptions> options = accy::GlooOptionsFromEnvironment();
  if (!options.ok()) {
    std::fprintf(stderr, "%s\n", std::string(options.status().message()).c_str());
    return 1;
  }
  const int rank = options->rank;
  accy::StatusOr<std::unique_ptr<accy::Communicator>> communicator =
      accy::CreateGlooCommunicator(*options);
  if (!communicator.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, std::string(communicator.status().message()).c_str());
    return 1;
  }
  const int rows = kBatch / kReplicas;
  accy::StatusOr<std::vector<float>> weights =
      Train(kReplicas, rank * rows, rows, communicator->get(), rank == 0);
  if (!weights.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, std::string(weights.status().message()).c_str());
    return 1;
  }
  // Every rank's weights at rank 0.
  std::vector<int> world(kReplicas);
  std::iota(world.begin(), world.end(), 0);
  const int64_t bytes = static_cast<int64_t>(weights->size() * sizeof(float));
  std::vector<float> all(weights->size() * kReplicas);
  accy::Status gathered = (*communicator)->AllGather(world, weights->data(), bytes, all.data());
  if (!gathered.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, std::string(gathered.message()).c_str());
    return 1;
  }
  if (rank != 0) return 0;
  for (int r = 1; r < kReplicas; ++r) {
    if (std::memcmp(all.data(), all.data() + r * weights->size(), static_cast<size_t>(bytes)) != 0) {
      std::printf("FAIL: rank %d's weights differ from rank 0's\n", r);
      return 1;
    }
  }
  std::printf("the 4 ranks hold bitwise identical weights (%zu floats)\n", weights->size());
  // The same steps on the whole batch in one process.
  accy::StatusOr<std::vector<float>> single = Train(1, 0, kBatch, nullptr, false);
  if (!single.ok()) {
    std::fprintf(stderr, "%s\n", std::string(single.status().message()).c_str());
    return 1;
  }
  double worst = 0;
  for (size_t i = 0; i < weights->size(); ++i) {
    worst = std::max(worst, std::abs(double((*weights)[i]) - double((*single)[i])));
  }
  std::printf("max |data-parallel - single process| over the weights: %.3g (tolerance 1e-5)\n",
              worst);
  return worst <= 1e-5 ? 0 : 1;
}

}  // namespace

int main() {
  return std::getenv("ACCY_WORLD_SIZE") != nullptr
             ? Rank()
             : accy_examples::LaunchRanks(kReplicas, "example_data_parallel_mlp");
}
