// RunCollectivesBenchRank (collectives_bench.h): one rank of `accy bench-collectives`: joins the
// world (accy's communicator, then a raw Gloo context), compiles the executables, checks each
// variant's values and buffers, times the variants, and gathers the samples (max over ranks).
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "accy/collectives.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/common/error.h"
#include "gloo/math.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/transport/tcp/device.h"
#include "src/util/str_cat.h"
#include "tools/collectives_bench.h"
#include "tools/collectives_bench_report.h"

namespace accy::tools {
namespace {

using Clock = std::chrono::steady_clock;
using bench_report::kComputed;
using bench_report::kDonated;
using bench_report::kExecutable;
using bench_report::kGlooInPlace;
using bench_report::kGlooOutOfPlace;
using bench_report::kMultiplyAlone;
using bench_report::kVariants;

// Runs raw Gloo calls, turning Gloo's exceptions into a status naming `what` (a timeout is
// kDeadlineExceeded, a closed connection kUnavailable, as accy's communicator reports them).
template <typename Body>
Status GlooCall(const std::string& what, Body&& body) {
  try {
    body();
    return absl::OkStatus();
  } catch (const gloo::IoException& e) {
    const std::string message = e.what();
    if (message.find("imed out") != std::string::npos ||
        message.find("imeout") != std::string::npos) {
      return absl::DeadlineExceededError(StrCat(what, ": timed out (Gloo: ", message, ")"));
    }
    return absl::UnavailableError(StrCat(what, ": a peer is gone (Gloo: ", message, ")"));
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat(what, ": Gloo failed: ", e.what()));
  }
}

// Forwards to `inner`, remembering the buffers of the last AllReduceTo: whether an executable's
// all_reduce reduced in place (one buffer) and where.
class BufferProbe final : public ForwardingCommunicator {
 public:
  using ForwardingCommunicator::ForwardingCommunicator;
  Status AllReduce(std::span<const int> group, void* data, int64_t count, ElementType type,
                   CollectiveReduction reduction) override {
    send = recv = data;
    return ForwardingCommunicator::AllReduce(group, data, count, type, reduction);
  }
  Status AllReduceTo(std::span<const int> group, const void* send_buffer, void* recv_buffer,
                     int64_t count, ElementType type, CollectiveReduction reduction) override {
    send = send_buffer;
    recv = recv_buffer;
    return ForwardingCommunicator::AllReduceTo(group, send_buffer, recv_buffer, count, type,
                                               reduction);
  }
  const void* send = nullptr;
  const void* recv = nullptr;
};

// One size's buffers, executables and samples on this rank.
struct SizeRun {
  int64_t bytes = 0;
  int64_t count = 0;
  std::vector<float> a;  // input, or the data reduced in place
  std::vector<float> b;  // output of the out-of-place variants
  Tensor ta, tb;         // borrowed views of a and b
  std::unique_ptr<Executable> plain, donated, computed, multiply;
  bench_report::SizeReport report;
};

std::string VectorType(int64_t count) { return StrCat("tensor<", count, "xf32>"); }

// An executable's @main on a grid of `world` replicas: all_reduce (sum) of its parameter
// (`donated`: aliased to the result, tf.aliasing_output) or of parameter * 2 (`computed`).
std::string AllReduceProgram(int world, int64_t count, bool donated, bool computed) {
  const std::string type = VectorType(count);
  std::string text = StrCat("module attributes {mhlo.num_replicas = ", world,
                            " : i32} {\n  func.func @main(%x: ", type,
                            donated ? " {tf.aliasing_output = 0 : i32}" : "", ") -> ", type,
                            " {\n");
  std::string operand = "%x";
  if (computed) {
    text += StrCat("    %two = stablehlo.constant dense<2.0> : ", type, "\n",
                   "    %g = stablehlo.multiply %x, %two : ", type, "\n");
    operand = "%g";
  }
  return text + StrCat("    %r = \"stablehlo.all_reduce\"(", operand, ") ({\n",
                       "      ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n",
                       "        %s = stablehlo.add %a, %b : tensor<f32>\n",
                       "        stablehlo.return %s : tensor<f32>\n    }) : (", type, ") -> ", type,
                       "\n    return %r : ", type, "\n  }\n}\n");
}

// x * 2 alone, no collective: what all_reduce(x * 2) computes besides the reduction.
std::string MultiplyProgram(int64_t count) {
  const std::string type = VectorType(count);
  return StrCat("module {\n  func.func @main(%x: ", type, ") -> ", type, " {\n",
                "    %two = stablehlo.constant dense<2.0> : ", type, "\n",
                "    %g = stablehlo.multiply %x, %two : ", type, "\n    return %g : ", type,
                "\n  }\n}\n");
}

StatusOr<std::unique_ptr<Executable>> CompileText(const Engine& engine, const std::string& text) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseStableHlo(text));
  return engine.Compile(*module, "main");
}

class Rank {
 public:
  Rank(const CollectivesBenchConfig& config, int world, int rank)
      : config_(config), world_(world), rank_(rank) {
    for (int r = 0; r < world; ++r) group_.push_back(r);
  }

  Status Connect(const std::string& store_dir);
  Status Prepare(SizeRun& s);
  // Runs `variant` once on `s`'s buffers.
  Status RunVariant(int variant, SizeRun& s, Communicator& communicator);
  Status Barrier() {
    return GlooCall("raw gloo::barrier", [&] {
      gloo::BarrierOptions options(raw_);
      options.setTag(next_tag_++);
      options.setTimeout(config_.timeout);
      gloo::barrier(options);
    });
  }
  // Elementwise max (or sum) of `values` over the ranks, in place, through the raw context.
  Status ReduceOverRanks(std::vector<double>& values, bool sum) {
    return GlooCall("raw gloo::allreduce of the timings", [&] {
      gloo::AllreduceOptions options(raw_);
      options.setOutput(values.data(), values.size());
      using Fn = void (*)(void*, const void*, const void*, size_t);
      options.setReduceFunction(sum ? static_cast<Fn>(&gloo::sum<double>)
                                    : static_cast<Fn>(&gloo::max<double>));
      options.setTag(next_tag_++);
      options.setTimeout(config_.timeout);
      gloo::allreduce(options);
    });
  }
  Status CheckValues(int variant, SizeRun& s);
  Status Measure(std::vector<SizeRun>& sizes);
  // Other processes' share of the machine during the timed samples (rank 0 only).
  const bench_report::CpuWindow& other_cpu() const { return other_cpu_; }

 private:
  const CollectivesBenchConfig& config_;
  const int world_;
  const int rank_;
  std::vector<int> group_;
  std::shared_ptr<gloo::rendezvous::Context> raw_;
  std::unique_ptr<Communicator> communicator_;
  std::unique_ptr<Engine> engine_;
  bench_report::CpuWindow other_cpu_;
  // Every raw Gloo call gets the next tag, as accy's communicator gives its calls (the same
  // calls, so the baseline differs from accy's only in what accy adds).
  uint32_t next_tag_ = 1;
};

Status Rank::Connect(const std::string& store_dir) {
  // accy's communicator first: its rendezvous names ranks that never arrive within the timeout.
  GlooOptions options;
  options.rank = rank_;
  options.world_size = world_;
  options.rendezvous = "file:" + store_dir;
  options.prefix = "accy";
  options.communicator.timeout = config_.timeout;
  ACCY_ASSIGN_OR_RETURN(communicator_, CreateGlooCommunicator(options));
  ACCY_RETURN_IF_ERROR(GlooCall("raw Gloo rendezvous", [&] {
    gloo::rendezvous::FileStore file_store(store_dir);
    gloo::rendezvous::PrefixStore store("raw", file_store);
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    raw_ = std::make_shared<gloo::rendezvous::Context>(rank_, world_);
    raw_->setTimeout(config_.timeout);
    raw_->connectFullMesh(store, device);
  }));
  EngineOptions engine_options;
  engine_options.num_threads = 1;
  ACCY_ASSIGN_OR_RETURN(engine_, Engine::Create(engine_options));
  return absl::OkStatus();
}

Status Rank::Prepare(SizeRun& s) {
  s.count = s.bytes / 4;
  s.report.bytes = s.bytes;
  s.a.assign(static_cast<size_t>(s.count), 0.0f);
  s.b.assign(static_cast<size_t>(s.count), 0.0f);
  ACCY_ASSIGN_OR_RETURN(TensorType type, TensorType::Create(ElementType::kF32, {s.count}));
  ACCY_ASSIGN_OR_RETURN(s.ta, Tensor::Borrow(type, s.a.data()));
  ACCY_ASSIGN_OR_RETURN(s.tb, Tensor::Borrow(type, s.b.data()));
  ACCY_ASSIGN_OR_RETURN(s.plain, CompileText(*engine_, AllReduceProgram(world_, s.count, false, false)));
  ACCY_ASSIGN_OR_RETURN(s.donated, CompileText(*engine_, AllReduceProgram(world_, s.count, true, false)));
  ACCY_ASSIGN_OR_RETURN(s.computed, CompileText(*engine_, AllReduceProgram(world_, s.count, false, true)));
  ACCY_ASSIGN_OR_RETURN(s.multiply, CompileText(*engine_, MultiplyProgram(s.count)));
  s.report.donated_in_place = s.donated->Stats().input_output_aliases_in_place.at(0);
  s.report.computed_arena_bytes = s.computed->Stats().arena_bytes;
  return absl::OkStatus();
}

Status Rank::RunVariant(int variant, SizeRun& s, Communicator& communicator) {
  const size_t n = static_cast<size_t>(s.count);
  using Fn = void (*)(void*, const void*, const void*, size_t);
  RunOptions run;
  run.communicator = &communicator;
  std::span<Tensor> a(&s.ta, 1), b(&s.tb, 1);
  switch (variant) {
    case kGlooInPlace:
    case kGlooOutOfPlace:
      return GlooCall("raw gloo::allreduce", [&] {
        gloo::AllreduceOptions options(raw_);
        if (variant == kGlooOutOfPlace) {
          options.setInput(s.a.data(), n);
          options.setOutput(s.b.data(), n);
        } else {
          options.setOutput(s.a.data(), n);
        }
        options.setReduceFunction(static_cast<Fn>(&gloo::sum<float>));
        options.setTag(next_tag_++);
        options.setTimeout(config_.timeout);
        gloo::allreduce(options);
      });
    case bench_report::kCommunicator:
      return communicator.AllReduce(group_, s.a.data(), s.count, ElementType::kF32,
                                    CollectiveReduction::kSum);
    case kExecutable:
      return s.plain->Run(a, b, run);
    case kDonated:
      return s.donated->Run(a, a, run);
    case kComputed:
      return s.computed->Run(a, b, run);
    case kMultiplyAlone:
      return s.multiply->Run(a, b);
    default:
      return absl::InternalError(StrCat("no variant ", variant));
  }
}

// Runs `variant` once on distinct per-rank inputs (rank + 1 everywhere) and checks every
// element of its result; for the executables, also which buffers their all_reduce was given.
Status Rank::CheckValues(int variant, SizeRun& s) {
  std::fill(s.a.begin(), s.a.end(), static_cast<float>(rank_ + 1));
  std::fill(s.b.begin(), s.b.end(), -1.0f);
  BufferProbe probe(*communicator_);
  ACCY_RETURN_IF_ERROR(RunVariant(variant, s, probe));
  const float sum = static_cast<float>(world_ * (world_ + 1) / 2);
  const bool into_b = variant == kGlooOutOfPlace || variant == kExecutable ||
                      variant == kComputed || variant == kMultiplyAlone;
  const float expected = variant == kComputed         ? 2 * sum
                         : variant == kMultiplyAlone ? 2.0f * static_cast<float>(rank_ + 1)
                                                     : sum;
  const std::vector<float>& result = into_b ? s.b : s.a;
  for (size_t i = 0; i < result.size(); ++i) {
    if (result[i] != expected) {
      return absl::InternalError(StrCat(bench_report::VariantLabel(variant), " at ",
                                        bench_report::SizeText(s.bytes), ": element ", i, " is ",
                                        result[i], ", expected ", expected));
    }
  }
  if (variant == kExecutable || variant == kDonated || variant == kComputed) {
    bench_report::Buffers& where = s.report.all_reduce_buffers[variant];
    where.one_buffer = probe.send == probe.recv;
    where.into_output = probe.recv == (variant == kDonated ? s.a.data() : s.b.data());
    where.from_input = probe.send == s.a.data();
  }
  return absl::OkStatus();
}

double CpuSeconds() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

Status Rank::Measure(std::vector<SizeRun>& sizes) {
  for (SizeRun& s : sizes) {
    ACCY_RETURN_IF_ERROR(Prepare(s));
    for (int v = 0; v < kVariants; ++v) ACCY_RETURN_IF_ERROR(CheckValues(v, s));
    std::fill(s.a.begin(), s.a.end(), 0.0f);  // sums of zeros stay zero: no overflow, no subnormals
    std::fill(s.b.begin(), s.b.end(), 0.0f);
    for (int v = 0; v < kVariants; ++v) ACCY_RETURN_IF_ERROR(RunVariant(v, s, *communicator_));
    // Calls per sample, the same on every rank: batches of 1, 4, 16, ... in-place Gloo calls
    // until one takes a quarter of sample_ms (the slowest rank's time), so that one slow call
    // on a busy machine does not set the count.
    const double target = config_.sample_ms * 1e-3;
    double calls = 1, seconds = 0;
    for (;; calls *= 4) {
      ACCY_RETURN_IF_ERROR(Barrier());
      const Clock::time_point start = Clock::now();
      for (int call = 0; call < static_cast<int>(calls); ++call) {
        ACCY_RETURN_IF_ERROR(RunVariant(kGlooInPlace, s, *communicator_));
      }
      std::vector<double> elapsed = {std::chrono::duration<double>(Clock::now() - start).count()};
      ACCY_RETURN_IF_ERROR(ReduceOverRanks(elapsed, false));
      seconds = elapsed[0];
      if (seconds >= target / 4 || calls >= 100000) break;
    }
    s.report.calls_per_sample = static_cast<int>(
        std::clamp(std::ceil(target / std::max(seconds / calls, 1e-9)), 1.0, 100000.0));
  }
  bench_report::CpuWindow window;
  ACCY_RETURN_IF_ERROR(Barrier());
  if (rank_ == 0) window.Begin();
  const double cpu_before = CpuSeconds();
  bool first_sample = true;
  for (SizeRun& s : sizes) {
    for (int rep = 0; rep < config_.reps; ++rep) {
      for (int k = 0; k < kVariants; ++k) {
        const int v = (k + rep) % kVariants;  // each variant leads in turn
        ACCY_RETURN_IF_ERROR(Barrier());
        const Clock::time_point start = Clock::now();
        for (int call = 0; call < s.report.calls_per_sample; ++call) {
          Status status = RunVariant(v, s, *communicator_);
          if (!status.ok()) {
            return Status(status.code(), StrCat(bench_report::VariantLabel(v), " at ",
                                                bench_report::SizeText(s.bytes), ": ",
                                                status.message()));
          }
        }
        s.report.seconds[v].push_back(std::chrono::duration<double>(Clock::now() - start).count() /
                                      s.report.calls_per_sample);
        if (first_sample && rank_ == config_.kill_rank) ::kill(::getpid(), SIGKILL);
        first_sample = false;
      }
    }
  }
  std::vector<double> cpu = {CpuSeconds() - cpu_before};
  if (rank_ == 0) window.End();
  // One sample's time is the slowest rank's: the collective is done when every rank is.
  std::vector<double> all;
  for (const SizeRun& s : sizes) {
    for (int v = 0; v < kVariants; ++v) {
      all.insert(all.end(), s.report.seconds[v].begin(), s.report.seconds[v].end());
    }
  }
  ACCY_RETURN_IF_ERROR(ReduceOverRanks(all, false));
  ACCY_RETURN_IF_ERROR(ReduceOverRanks(cpu, true));
  size_t next = 0;
  for (SizeRun& s : sizes) {
    for (int v = 0; v < kVariants; ++v) {
      for (double& seconds : s.report.seconds[v]) seconds = all[next++];
    }
  }
  if (rank_ == 0) window.SubtractCpuSeconds(cpu[0]);
  if (rank_ == 0) other_cpu_ = window;
  return absl::OkStatus();
}

}  // namespace

Status RunCollectivesBenchRank(const CollectivesBenchConfig& config, int world, int rank,
                               const std::string& store_dir, const std::string& report_path) {
  if (world < 2 || rank < 0 || rank >= world) {
    return absl::InvalidArgumentError(StrCat("rank ", rank, " of a world of ", world));
  }
  // A raw Gloo write to a peer that died must be an error, not the end of this process.
  ::signal(SIGPIPE, SIG_IGN);
  Rank self(config, world, rank);
  ACCY_RETURN_IF_ERROR(self.Connect(store_dir));
  std::vector<SizeRun> sizes(config.sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) sizes[i].bytes = config.sizes[i];
  ACCY_RETURN_IF_ERROR(self.Measure(sizes));
  if (rank != 0) return absl::OkStatus();
  std::vector<bench_report::SizeReport> reports;
  for (const SizeRun& s : sizes) reports.push_back(s.report);
  std::ofstream out(report_path, std::ios::binary);
  out << (config.json ? bench_report::WorldJson(world, config.reps, self.other_cpu(), reports)
                      : bench_report::WorldText(world, config.reps, self.other_cpu(), reports));
  if (!out) return absl::PermissionDeniedError(StrCat(report_path, ": cannot write"));
  return absl::OkStatus();
}

}  // namespace accy::tools
