// all_reduce across a Gloo world on TCP loopback: W ranks (2 and 4), each a thread of this
// process with its own Gloo context and TCP pairs (the same transport and algorithm as W
// processes; threads only so Google Benchmark can time them), three ways in one run:
//   BM_GlooAllreduceDirect   gloo::allreduce with gloo::sum<float>, in place (the baseline)
//   BM_GlooAllreduceDirectOutOfPlace
//                            the same with a separate input and output buffer (Gloo reads the
//                            input and writes the result to the output), which is what an
//                            executable does: its parameters are the caller's and stay intact
//   BM_AccyCommunicator      accy's Communicator::AllReduce (accy/collectives.h)
//   BM_AccyExecutable        an executable holding one stablehlo.all_reduce, Run with the
//                            communicator (the executor's collective item)
// at 64 MiB of f32 (GBps = bytes reduced per second; vs_gloo = in-place baseline time / this
// time, vs_gloo_out_of_place = out-of-place baseline time / this time) and at 4 bytes
// (overhead_us = this time minus the in-place baseline's, in microseconds). A team of persistent
// threads runs each iteration; every rank's call is inside the timed region. Ranks as processes
// (the target, one address space each): `accy bench-collectives`.
//
// all_to_all of 16 MiB f32 ([2048, 2048]) through an executable, on Gloo and on the in-process
// communicator:
//   BM_AccyAllToAll/W/kind/0   split_dimension = concat_dimension = 0: the kernel sends straight
//                              from the operand and receives straight into the result
//   BM_AccyAllToAll/W/kind/1   split_dimension = concat_dimension = 1: packed into a staging
//                              buffer and unpacked from another (what every layout did before);
//                              vs_direct = the /0 time / this time
//   BM_CommunicatorAllToAll    Communicator::AllToAll of the same bytes (the floor)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <barrier>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "accy/collectives.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "bench/scratch_dirs.h"
#include "gloo/allreduce.h"
#include "gloo/math.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/transport/tcp/device.h"

namespace {

namespace fs = std::filesystem;

// W persistent threads (rank 0 is the caller) that run one job per Run().
class Team {
 public:
  explicit Team(int size) : size_(size), start_(size), done_(size) {
    for (int rank = 1; rank < size; ++rank) {
      threads_.emplace_back([this, rank] {
        while (true) {
          start_.arrive_and_wait();
          if (stop_) return;
          job_(rank);
          done_.arrive_and_wait();
        }
      });
    }
  }
  ~Team() {
    stop_ = true;
    start_.arrive_and_wait();
    for (std::thread& t : threads_) t.join();
  }
  void Run(const std::function<void(int)>& job) {
    job_ = job;
    start_.arrive_and_wait();
    job_(0);
    done_.arrive_and_wait();
  }
  int size() const { return size_; }

 private:
  int size_;
  std::barrier<> start_;
  std::barrier<> done_;
  std::function<void(int)> job_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

std::string FreshDir(const std::string& name) { return accy::bench::ScratchDir(name).string(); }

// One world of each kind, per world size, connected once and kept for the whole run.
struct World {
  std::unique_ptr<Team> team;
  std::vector<std::shared_ptr<gloo::rendezvous::Context>> gloo;
  std::vector<std::unique_ptr<accy::Communicator>> accy;
  std::unique_ptr<accy::Engine> engine;
  // By (element count, donated).
  std::map<std::pair<int64_t, bool>, std::unique_ptr<accy::Executable>> executables;
  std::vector<std::vector<float>> data;  // per rank
  // Per rank: the tag of its next raw Gloo call. Every call gets a new one, as accy's
  // communicator gives its calls.
  std::vector<uint32_t> tags;
  std::vector<std::unique_ptr<accy::Communicator>> in_process;
  // all_to_all executables by split = concat dimension (0 or 1).
  std::map<int, std::unique_ptr<accy::Executable>> all_to_all;
};

World& GetWorld(int size) {
  static std::map<int, std::unique_ptr<World>> worlds;
  std::unique_ptr<World>& world = worlds[size];
  if (world != nullptr) return *world;
  world = std::make_unique<World>();
  world->team = std::make_unique<Team>(size);
  world->gloo.resize(static_cast<size_t>(size));
  world->tags.assign(static_cast<size_t>(size), 1);
  world->accy.resize(static_cast<size_t>(size));
  const std::string raw_dir = FreshDir("gloo");
  const std::string accy_dir = FreshDir("accy");
  world->team->Run([&](int rank) {
    gloo::rendezvous::FileStore file_store(raw_dir);
    gloo::rendezvous::PrefixStore store("raw", file_store);
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->connectFullMesh(store, device);
    world->gloo[static_cast<size_t>(rank)] = context;
    accy::GlooOptions options;
    options.rank = rank;
    options.world_size = size;
    options.rendezvous = "file:" + accy_dir;
    auto communicator = accy::CreateGlooCommunicator(options);
    if (!communicator.ok()) std::abort();
    world->accy[static_cast<size_t>(rank)] = *std::move(communicator);
  });
  accy::EngineOptions engine_options;
  engine_options.num_threads = 1;
  world->engine = *accy::Engine::Create(engine_options);
  world->in_process = *accy::CreateInProcessCommunicators(size);
  return *world;
}

std::vector<float>& RankData(World& world, int rank, int64_t count) {
  world.data.resize(static_cast<size_t>(world.team->size()));
  std::vector<float>& data = world.data[static_cast<size_t>(rank)];
  if (static_cast<int64_t>(data.size()) != count) data.assign(static_cast<size_t>(count), 1.0f);
  return data;
}

// An executable holding one all_reduce (sum) of `count` f32; `donated`: its parameter is
// aliased to its result (`tf.aliasing_output`), so a run passing one buffer reduces in place.
const accy::Executable& AllReduceExecutable(World& world, int64_t count, bool donated = false) {
  std::unique_ptr<accy::Executable>& exe = world.executables[{count, donated}];
  if (exe != nullptr) return *exe;
  const std::string type = "tensor<" + std::to_string(count) + "xf32>";
  const std::string text =
      "module attributes {mhlo.num_replicas = " + std::to_string(world.team->size()) +
      " : i32} {\n  func.func @main(%x: " + type +
      (donated ? " {tf.aliasing_output = 0 : i32}" : "") + ") -> " + type +
      " {\n    %r = \"stablehlo.all_reduce\"(%x) ({\n      ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "        %s = stablehlo.add %a, %b : tensor<f32>\n        stablehlo.return %s : tensor<f32>\n"
      "    }) : (" + type + ") -> " + type + "\n    return %r : " + type + "\n  }\n}\n";
  auto module = accy::ParseStableHlo(text);
  if (!module.ok()) std::abort();
  auto compiled = world.engine->Compile(**module, "main");
  if (!compiled.ok()) std::abort();
  if (donated && !(*compiled)->Stats().input_output_aliases_in_place.at(0)) std::abort();
  exe = *std::move(compiled);
  return *exe;
}

enum class Role { kBaseline, kOutOfPlaceBaseline, kMeasured };

// Seconds per iteration of the baselines, by (world, count), for the ratios.
std::map<std::pair<int, int64_t>, double>& Baseline(Role role) {
  static std::map<std::pair<int, int64_t>, double> in_place, out_of_place;
  return role == Role::kOutOfPlaceBaseline ? out_of_place : in_place;
}

void Report(benchmark::State& state, int size, int64_t count, Role role) {
  const double seconds =
      state.iterations() > 0 ? state.counters["seconds"].value / state.iterations() : 0;
  state.counters.erase("seconds");
  const double bytes = static_cast<double>(count) * 4;
  state.counters["GBps"] = seconds > 0 ? bytes / seconds / 1e9 : 0;
  const auto key = std::make_pair(size, count);
  if (role != Role::kMeasured) {
    Baseline(role)[key] = seconds;
  } else if (seconds > 0) {
    auto& in_place = Baseline(Role::kBaseline);
    auto& out_of_place = Baseline(Role::kOutOfPlaceBaseline);
    if (in_place.count(key) != 0) {
      state.counters["vs_gloo"] = in_place[key] / seconds;
      state.counters["overhead_us"] = (seconds - in_place[key]) * 1e6;
    }
    if (out_of_place.count(key) != 0) state.counters["vs_gloo_out_of_place"] = out_of_place[key] / seconds;
  }
  state.SetLabel("W=" + std::to_string(size) + ", TCP loopback");
}

template <typename Fn>
void Time(benchmark::State& state, World& world, const Fn& fn) {
  double total = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    world.team->Run(fn);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  state.counters["seconds"] = total;
}

void BM_GlooAllreduceDirect(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  const int64_t count = state.range(1);
  World& world = GetWorld(size);
  for (int r = 0; r < size; ++r) RankData(world, r, count);
  Time(state, world, [&](int rank) {
    gloo::AllreduceOptions options(world.gloo[static_cast<size_t>(rank)]);
    options.setOutput(RankData(world, rank, count).data(), static_cast<size_t>(count));
    options.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    options.setTag(world.tags[static_cast<size_t>(rank)]++);
    gloo::allreduce(options);
  });
  Report(state, size, count, Role::kBaseline);
}

void BM_GlooAllreduceDirectOutOfPlace(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  const int64_t count = state.range(1);
  World& world = GetWorld(size);
  std::vector<std::vector<float>> outputs(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    RankData(world, r, count);
    outputs[static_cast<size_t>(r)].assign(static_cast<size_t>(count), 0.0f);  // first touch
  }
  Time(state, world, [&](int rank) {
    gloo::AllreduceOptions options(world.gloo[static_cast<size_t>(rank)]);
    options.setInput(RankData(world, rank, count).data(), static_cast<size_t>(count));
    options.setOutput(outputs[static_cast<size_t>(rank)].data(), static_cast<size_t>(count));
    options.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    options.setTag(world.tags[static_cast<size_t>(rank)]++);
    gloo::allreduce(options);
  });
  Report(state, size, count, Role::kOutOfPlaceBaseline);
}

void BM_AccyCommunicator(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  const int64_t count = state.range(1);
  World& world = GetWorld(size);
  std::vector<int> group(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    group[static_cast<size_t>(r)] = r;
    RankData(world, r, count);
  }
  Time(state, world, [&](int rank) {
    accy::Status status = world.accy[static_cast<size_t>(rank)]->AllReduce(
        group, RankData(world, rank, count).data(), count, accy::ElementType::kF32,
        accy::CollectiveReduction::kSum);
    if (!status.ok()) std::abort();
  });
  Report(state, size, count, Role::kMeasured);
}

void BM_AccyExecutable(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  const int64_t count = state.range(1);
  World& world = GetWorld(size);
  const accy::Executable& exe = AllReduceExecutable(world, count);
  const accy::TensorType type = *accy::TensorType::Create(accy::ElementType::kF32, {count});
  std::vector<accy::Tensor> inputs, outputs;
  for (int r = 0; r < size; ++r) {
    inputs.push_back(*accy::Tensor::Borrow(type, RankData(world, r, count).data()));
    outputs.push_back(*accy::Tensor::Allocate(type));
  }
  Time(state, world, [&](int rank) {
    accy::RunOptions options;
    options.communicator = world.accy[static_cast<size_t>(rank)].get();
    accy::Status status = exe.Run(std::span<const accy::Tensor>(&inputs[static_cast<size_t>(rank)], 1),
                                  std::span<accy::Tensor>(&outputs[static_cast<size_t>(rank)], 1),
                                  options);
    if (!status.ok()) std::abort();
  });
  Report(state, size, count, Role::kMeasured);
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int size : {2, 4}) {
    b->Args({size, 1});
    b->Args({size, int64_t{16} << 20});  // 64 MiB of f32
  }
  b->UseRealTime();
}

// The same executable with its parameter donated: each rank's output is its input buffer, so
// the all_reduce reduces in the caller's memory as the in-place Gloo baseline does.
void BM_AccyExecutableDonated(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  const int64_t count = state.range(1);
  World& world = GetWorld(size);
  const accy::Executable& exe = AllReduceExecutable(world, count, /*donated=*/true);
  const accy::TensorType type = *accy::TensorType::Create(accy::ElementType::kF32, {count});
  std::vector<accy::Tensor> buffers;
  for (int r = 0; r < size; ++r) {
    buffers.push_back(*accy::Tensor::Borrow(type, RankData(world, r, count).data()));
  }
  Time(state, world, [&](int rank) {
    accy::RunOptions options;
    options.communicator = world.accy[static_cast<size_t>(rank)].get();
    std::span<accy::Tensor> io(&buffers[static_cast<size_t>(rank)], 1);
    accy::Status status = exe.Run(io, io, options);
    if (!status.ok()) std::abort();
  });
  Report(state, size, count, Role::kMeasured);
}

constexpr int64_t kAllToAllSide = 2048;  // [2048, 2048] f32: 16 MiB

// An executable holding one all_to_all of [2048, 2048] f32 with split = concat = `dim`.
const accy::Executable& AllToAllExecutable(World& world, int dim) {
  std::unique_ptr<accy::Executable>& exe = world.all_to_all[dim];
  if (exe != nullptr) return *exe;
  const std::string type = "tensor<" + std::to_string(kAllToAllSide) + "x" +
                           std::to_string(kAllToAllSide) + "xf32>";
  const std::string d = std::to_string(dim);
  const std::string text =
      "module attributes {mhlo.num_replicas = " + std::to_string(world.team->size()) +
      " : i32} {\n  func.func @main(%x: " + type + ") -> " + type +
      " {\n    %r = \"stablehlo.all_to_all\"(%x) {split_dimension = " + d +
      " : i64, concat_dimension = " + d + " : i64, split_count = " +
      std::to_string(world.team->size()) + " : i64} : (" + type + ") -> " + type +
      "\n    return %r : " + type + "\n  }\n}\n";
  auto module = accy::ParseStableHlo(text);
  if (!module.ok()) std::abort();
  auto compiled = world.engine->Compile(**module, "main");
  if (!compiled.ok()) std::abort();
  exe = *std::move(compiled);
  return *exe;
}

std::vector<accy::Communicator*> Communicators(World& world, bool gloo) {
  std::vector<accy::Communicator*> out;
  for (int r = 0; r < world.team->size(); ++r) {
    out.push_back(gloo ? world.accy[static_cast<size_t>(r)].get()
                       : world.in_process[static_cast<size_t>(r)].get());
  }
  return out;
}

// Seconds per all_to_all of the direct layout, by (world, gloo), for vs_direct.
std::map<std::pair<int, bool>, double>& AllToAllDirect() {
  static std::map<std::pair<int, bool>, double> seconds;
  return seconds;
}

// args: W, communicator (0 in-process, 1 Gloo), split = concat dimension.
void BM_AccyAllToAll(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  const bool gloo = state.range(1) == 1;
  const int dim = static_cast<int>(state.range(2));
  World& world = GetWorld(size);
  const accy::Executable& exe = AllToAllExecutable(world, dim);
  const int64_t count = kAllToAllSide * kAllToAllSide;
  const accy::TensorType type =
      *accy::TensorType::Create(accy::ElementType::kF32, {kAllToAllSide, kAllToAllSide});
  std::vector<accy::Tensor> inputs, outputs;
  for (int r = 0; r < size; ++r) {
    inputs.push_back(*accy::Tensor::Borrow(type, RankData(world, r, count).data()));
    outputs.push_back(*accy::Tensor::Allocate(type));
  }
  const std::vector<accy::Communicator*> communicators = Communicators(world, gloo);
  Time(state, world, [&](int rank) {
    accy::RunOptions options;
    options.communicator = communicators[static_cast<size_t>(rank)];
    accy::Status status = exe.Run(std::span<const accy::Tensor>(&inputs[static_cast<size_t>(rank)], 1),
                                  std::span<accy::Tensor>(&outputs[static_cast<size_t>(rank)], 1),
                                  options);
    if (!status.ok()) std::abort();
  });
  const double seconds = state.counters["seconds"].value / std::max<int64_t>(state.iterations(), 1);
  state.counters.erase("seconds");
  state.counters["GBps"] = seconds > 0 ? static_cast<double>(count) * 4 / seconds / 1e9 : 0;
  auto& direct = AllToAllDirect();
  if (dim == 0) direct[{size, gloo}] = seconds;
  if (dim != 0 && seconds > 0 && direct.count({size, gloo}) != 0) {
    state.counters["vs_direct"] = direct[{size, gloo}] / seconds;
  }
  state.SetLabel("W=" + std::to_string(size) + (gloo ? ", Gloo TCP loopback" : ", in-process") +
                 (dim == 0 ? ", no staging" : ", staged both ways"));
}

// Communicator::AllToAll of the same 16 MiB per rank, buffers given: what the kernel adds to.
void BM_CommunicatorAllToAll(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  const bool gloo = state.range(1) == 1;
  World& world = GetWorld(size);
  const int64_t count = kAllToAllSide * kAllToAllSide;
  std::vector<std::vector<float>> outputs(static_cast<size_t>(size));
  std::vector<int> group;
  for (int r = 0; r < size; ++r) {
    RankData(world, r, count);
    outputs[static_cast<size_t>(r)].assign(static_cast<size_t>(count), 0.0f);
    group.push_back(r);
  }
  const std::vector<accy::Communicator*> communicators = Communicators(world, gloo);
  Time(state, world, [&](int rank) {
    accy::Status status = communicators[static_cast<size_t>(rank)]->AllToAll(
        group, RankData(world, rank, count).data(), count * 4 / size,
        outputs[static_cast<size_t>(rank)].data());
    if (!status.ok()) std::abort();
  });
  const double seconds = state.counters["seconds"].value / std::max<int64_t>(state.iterations(), 1);
  state.counters.erase("seconds");
  state.counters["GBps"] = seconds > 0 ? static_cast<double>(count) * 4 / seconds / 1e9 : 0;
  state.SetLabel("W=" + std::to_string(size) + (gloo ? ", Gloo TCP loopback" : ", in-process"));
}

void AllToAllShapes(benchmark::internal::Benchmark* b) {
  for (int size : {2, 4}) {
    for (int gloo : {0, 1}) {
      for (int dim : {0, 1}) b->Args({size, gloo, dim});
    }
  }
  b->UseRealTime();
}

void CommunicatorShapes(benchmark::internal::Benchmark* b) {
  for (int size : {2, 4}) {
    for (int gloo : {0, 1}) b->Args({size, gloo});
  }
  b->UseRealTime();
}

BENCHMARK(BM_GlooAllreduceDirect)->Apply(Shapes);
BENCHMARK(BM_GlooAllreduceDirectOutOfPlace)->Apply(Shapes);
BENCHMARK(BM_AccyCommunicator)->Apply(Shapes);
BENCHMARK(BM_AccyExecutable)->Apply(Shapes);
BENCHMARK(BM_AccyExecutableDonated)->Apply(Shapes);
BENCHMARK(BM_CommunicatorAllToAll)->Apply(CommunicatorShapes);
BENCHMARK(BM_AccyAllToAll)->Apply(AllToAllShapes);

}  // namespace
