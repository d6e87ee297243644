// `accy bench-load`: the issue-15 load benchmark. Times the demo's transformer block and the
// MLP at 1 thread and at T threads, with the machine otherwise idle and with N spinner
// processes the command itself starts (fork, optionally pinned) and stops, interleaved so that
// every ratio compares batches measured back to back under the same load. Reports the median
// per-run time of each (load, threads) cell over the repetitions with its range (the noise),
// the paired ratios T-thread / 1-thread, how many T-thread runs the engine ran on one thread
// (EngineOptions::reduce_threads_under_load), and the CPU share other processes used during
// the unloaded batches.
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accy/engine.h"
#include "bench/workloads.h"
#include "src/util/str_cat.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace accy::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kCommand[] = "bench-load";
constexpr char kUsage[] =
    "usage: accy bench-load [--workloads block,mlp] [--threads T] [--spinners N] [--pin]\n"
    "                       [--reps R] [--batch-ms M] [--seq L] [--fixed-threads]\n"
    "       accy bench-load --mechanism-cost [--workloads block,mlp] [--threads T] [--reps R]\n"
    "                       [--batch-ms M] [--seq L]\n"
    "  Times the `accy demo` transformer block (seq L, default 128) and the MLP 784-512-512-10\n"
    "  (batch 64) at 1 and T threads (default 2), unloaded and beside N busy-looping spinner\n"
    "  processes (default: one per core) that it starts and stops itself, R times each\n"
    "  (default 8), interleaved; each batch runs for about M ms (default 150).\n"
    "  --pin            pin spinner i to CPU i mod cores\n"
    "  --fixed-threads  EngineOptions::reduce_threads_under_load = false (every run uses T)\n"
    "  Prints per cell the median ms per run over the repetitions (min-max), the paired ratios\n"
    "  T-thread / 1-thread, and the T-thread runs that used one thread.\n"
    "  --mechanism-cost  no spinners: times T-thread runs with reduce_threads_under_load on\n"
    "                    and off, batches interleaved, on the machine as it is, and prints the\n"
    "                    paired ratio on / off (what the mechanism costs an unloaded run).\n";

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n == 0 ? 0 : n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double ProcessCpuSeconds() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Other processes' share of the machine's CPU time over the windows between Begin and End:
// the machine's busy jiffies minus this process's own CPU time.
class OthersCpu {
 public:
  void Begin() {
    open_ = MachineJiffies(&busy0_, &total0_);
    cpu0_ = ProcessCpuSeconds();
  }
  void End() {
    int64_t busy1 = 0, total1 = 0;
    if (!open_ || !MachineJiffies(&busy1, &total1)) return;
    const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
    busy_ += (busy1 - busy0_) - static_cast<int64_t>((ProcessCpuSeconds() - cpu0_) * ticks);
    total_ += total1 - total0_;
    open_ = false;
  }
  // Prints "<prefix>: N% of the machine" when any window was measured.
  void Print(const char* prefix) const {
    if (total_ <= 0) return;
    std::printf("\n%s: %.0f%% of the machine\n", prefix,
                100.0 * static_cast<double>(std::max<int64_t>(busy_, 0)) /
                    static_cast<double>(total_));
  }

 private:
  bool open_ = false;
  int64_t busy0_ = 0, total0_ = 0, busy_ = 0, total_ = 0;
  double cpu0_ = 0;
};

// Spinner processes: each busy-loops until killed.
class Spinners {
 public:
  Spinners(int count, bool pin) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    for (int i = 0; i < count; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        if (pin) {
          cpu_set_t set;
          CPU_ZERO(&set);
          CPU_SET(static_cast<unsigned>(i) % cores, &set);
          ::sched_setaffinity(0, sizeof(set), &set);
        }
        volatile uint64_t spin = 0;
        for (;;) spin = spin + 1;
      }
      if (pid > 0) pids_.push_back(pid);
    }
    // Let them reach the CPUs before anything is timed.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  ~Spinners() {
    for (pid_t pid : pids_) ::kill(pid, SIGKILL);
    for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
  }
  size_t started() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

struct Case {
  std::string name;
  bench::Workload workload;
  std::vector<Tensor> inputs, outputs;
  std::unique_ptr<Executable> single, multi;
  int runs_per_batch = 10;
  // [load][threads index] -> batch medians over the repetitions.
  std::vector<double> cells[2][2];
  std::vector<double> ratios[2];
  int64_t reduced[2] = {0, 0};  // T-thread runs on one thread, per load
  int64_t multi_runs[2] = {0, 0};
  bool same_bits = false;  // 1-thread output == T-thread output, bit for bit
  double max_ulps = 0;      // else their largest difference in ULPs
};

// Median ms per run over one batch of `runs` runs.
StatusOr<double> Batch(const Executable& exe, Case& c, int runs) {
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(runs));
  for (int r = 0; r < runs; ++r) {
    const Clock::time_point start = Clock::now();
    ACCY_RETURN_IF_ERROR(exe.Run(c.inputs, c.outputs));
    ms.push_back(Ms(Clock::now() - start));
  }
  return Median(std::move(ms));
}

// A case with its workload, inputs and outputs, `single` compiled with `first` and `multi` with
// `second`, both warmed up, and the batch size from `single`'s warm-up time (about `batch_ms`
// per batch).
StatusOr<Case> MakeCase(const std::string& name, int64_t seq, int batch_ms,
                        const EngineOptions& first, const EngineOptions& second) {
  Case c;
  c.name = name;
  ACCY_ASSIGN_OR_RETURN(c.workload, name == "block" ? bench::BuildBlock(seq) : bench::BuildMlp(64));
  c.inputs = bench::DeterministicInputs(*c.workload.module);
  c.outputs = bench::AllocateOutputs(*c.workload.module);
  for (const EngineOptions* options : {&first, &second}) {
    ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(*options));
    ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, engine->Compile(*c.workload.module));
    (options == &first ? c.single : c.multi) = std::move(exe);
  }
  ACCY_ASSIGN_OR_RETURN(double warm, Batch(*c.single, c, 3));
  ACCY_RETURN_IF_ERROR(Batch(*c.multi, c, 3).status());
  c.runs_per_batch = std::clamp(static_cast<int>(batch_ms / std::max(warm, 1e-3)), 5, 5000);
  return c;
}

int BenchLoad(const std::vector<std::string>& names, int threads, int spinners, bool pin,
              int reps, int batch_ms, int64_t seq, bool fixed) {
  auto fail = [](const Status& status) { return ReportError(kCommand, status); };
  std::vector<Case> cases;
  for (const std::string& name : names) {
    EngineOptions single, multi;
    single.num_threads = 1;
    multi.num_threads = threads;
    single.reduce_threads_under_load = multi.reduce_threads_under_load = !fixed;
    StatusOr<Case> c = MakeCase(name, seq, batch_ms, single, multi);
    if (!c.ok()) return fail(c.status());
    cases.push_back(*std::move(c));
  }
  std::printf("accy bench-load: threads 1 vs %d, %d spinner processes%s, %d repetitions, "
              "reduce_threads_under_load %s\n",
              threads, spinners, pin ? " (pinned)" : "", reps, fixed ? "off" : "on");
  OthersCpu others;  // during the unloaded batches
  for (int rep = 0; rep < reps; ++rep) {
    for (int phase = 0; phase < 2; ++phase) {
      const int load = (rep % 2 == 0) ? phase : 1 - phase;
      std::unique_ptr<Spinners> spinning;
      if (load == 1) spinning = std::make_unique<Spinners>(spinners, pin);
      if (load == 0) others.Begin();
      for (Case& c : cases) {
        double cell[2] = {0, 0};
        for (int k = 0; k < 2; ++k) {
          const int which = (rep % 2 == 0) ? k : 1 - k;  // 1T first on even repetitions
          const Executable& exe = which == 0 ? *c.single : *c.multi;
          const int64_t before = c.multi->Stats().runs_with_fewer_threads;
          StatusOr<double> ms = Batch(exe, c, c.runs_per_batch);
          if (!ms.ok()) return fail(ms.status());
          cell[which] = *ms;
          c.cells[load][which].push_back(*ms);
          if (which == 1) {
            c.reduced[load] += c.multi->Stats().runs_with_fewer_threads - before;
            c.multi_runs[load] += c.runs_per_batch;
          }
        }
        c.ratios[load].push_back(cell[1] / cell[0]);
      }
      if (load == 0) others.End();
    }
  }
  // The bits a one-thread run computes against a run that always uses T threads.
  for (Case& c : cases) {
    EngineOptions options;
    options.num_threads = threads;
    options.reduce_threads_under_load = false;
    StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
    if (!engine.ok()) return fail(engine.status());
    StatusOr<std::unique_ptr<Executable>> fixed_exe = (*engine)->Compile(*c.workload.module);
    if (!fixed_exe.ok()) return fail(fixed_exe.status());
    StatusOr<std::vector<Tensor>> at_one = c.single->Run(c.inputs);
    StatusOr<std::vector<Tensor>> at_many = (*fixed_exe)->Run(c.inputs);
    if (!at_one.ok()) return fail(at_one.status());
    if (!at_many.ok()) return fail(at_many.status());
    const TensorComparison exact = CompareExact((*at_one)[0], (*at_many)[0]);
    c.same_bits = exact.ok;
    if (!exact.ok) c.max_ulps = CompareUlp((*at_one)[0], (*at_many)[0], 0).max_distance;
  }
  const char* load_names[2] = {"unloaded", "loaded"};
  for (const Case& c : cases) {
    std::printf("\n%s (%s, %d runs per batch; output at 1 and %d threads: %s):\n",
                c.name.c_str(), c.workload.name.c_str(), c.runs_per_batch, threads,
                c.same_bits ? "same bits" : StrCat("up to ", c.max_ulps, " ULP apart").c_str());
    for (int load = 0; load < 2; ++load) {
      for (int which = 0; which < 2; ++which) {
        const std::vector<double>& v = c.cells[load][which];
        std::printf("  %-8s %dT: median %8.3f ms per run (min %.3f, max %.3f over %zu batches)\n",
                    load_names[load], which == 0 ? 1 : threads, Median(v),
                    *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()),
                    v.size());
      }
    }
    for (int load = 0; load < 2; ++load) {
      const std::vector<double>& r = c.ratios[load];
      std::printf("  %-8s %dT/1T ratio: median %.2f (min %.2f, max %.2f, paired per repetition); "
                  "%dT runs on one thread: %lld of %lld\n",
                  load_names[load], threads, Median(r), *std::min_element(r.begin(), r.end()),
                  *std::max_element(r.begin(), r.end()), threads,
                  static_cast<long long>(c.reduced[load]),
                  static_cast<long long>(c.multi_runs[load]));
    }
  }
  others.Print("other processes' CPU during the unloaded batches");
  return kExitOk;
}


// The unloaded cost of EngineOptions::reduce_threads_under_load: the same T-thread program
// compiled with the mechanism on and off, batches of each interleaved (order alternating per
// repetition) on the machine as it is. Prints per workload the median ms per run of each over
// the repetitions (min-max), the paired per-repetition ratio on / off, the runs the mechanism
// put on one thread, and other processes' CPU share during the batches (a loaded machine makes
// the ratio meaningless; the mechanism is meant to reduce there).
int MechanismCost(const std::vector<std::string>& names, int threads, int reps, int batch_ms,
                  int64_t seq) {
  auto fail = [](const Status& status) { return ReportError(kCommand, status); };
  std::printf("accy bench-load --mechanism-cost: %d threads, reduce_threads_under_load on vs "
              "off, %d repetitions, no spinners\n",
              threads, reps);
  OthersCpu others;
  for (const std::string& name : names) {
    EngineOptions on, off;  // `single` runs with the mechanism, `multi` without
    on.num_threads = off.num_threads = threads;
    on.reduce_threads_under_load = true;
    off.reduce_threads_under_load = false;
    StatusOr<Case> made = MakeCase(name, seq, batch_ms, on, off);
    if (!made.ok()) return fail(made.status());
    Case& c = *made;
    for (int rep = 0; rep < reps; ++rep) {
      others.Begin();
      double cell[2] = {0, 0};
      for (int k = 0; k < 2; ++k) {
        const int which = (rep % 2 == 0) ? k : 1 - k;  // mechanism on first on even repetitions
        const Executable& exe = which == 0 ? *c.single : *c.multi;
        const int64_t before = c.single->Stats().runs_with_fewer_threads;
        StatusOr<double> ms = Batch(exe, c, c.runs_per_batch);
        if (!ms.ok()) return fail(ms.status());
        cell[which] = *ms;
        c.cells[0][which].push_back(*ms);
        if (which == 0) {
          c.reduced[0] += c.single->Stats().runs_with_fewer_threads - before;
          c.multi_runs[0] += c.runs_per_batch;
        }
      }
      c.ratios[0].push_back(cell[0] / cell[1]);
      others.End();
    }
    std::printf("\n%s (%s, %d runs per batch):\n", c.name.c_str(), c.workload.name.c_str(),
                c.runs_per_batch);
    const char* labels[2] = {"on", "off"};
    for (int which = 0; which < 2; ++which) {
      const std::vector<double>& v = c.cells[0][which];
      std::printf("  mechanism %-3s %dT: median %8.3f ms per run (min %.3f, max %.3f over %zu "
                  "batches)\n",
                  labels[which], threads, Median(v), *std::min_element(v.begin(), v.end()),
                  *std::max_element(v.begin(), v.end()), v.size());
    }
    const std::vector<double>& r = c.ratios[0];
    std::printf("  on/off ratio: median %.3f (min %.3f, max %.3f, paired per repetition); runs "
                "on one thread with the mechanism on: %lld of %lld\n",
                Median(r), *std::min_element(r.begin(), r.end()),
                *std::max_element(r.begin(), r.end()), static_cast<long long>(c.reduced[0]),
                static_cast<long long>(c.multi_runs[0]));
  }
  others.Print("other processes' CPU during the batches");
  return kExitOk;
}

}  // namespace

int BenchLoadCommand(std::span<const std::string> args) {
  static const OptionSpec kSpecs[] = {
      {"workloads", true, false}, {"threads", true, false}, {"spinners", true, false},
      {"pin", false, false},      {"reps", true, false},    {"batch-ms", true, false},
      {"seq", true, false},       {"fixed-threads", false, false},
      {"mechanism-cost", false, false}};
  StatusOr<ParsedArgs> parsed = ParseArgs(args, kSpecs);
  if (!parsed.ok()) return ReportUsage(kCommand, std::string(parsed.status().message()), kUsage);
  if (parsed->help) {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  if (!parsed->positional.empty()) {
    return ReportUsage(kCommand, "takes no positional arguments", kUsage);
  }
  std::vector<std::string> names;
  std::stringstream list(parsed->Get("workloads", "block,mlp"));
  for (std::string name; std::getline(list, name, ',');) {
    if (name != "block" && name != "mlp") {
      return ReportUsage(kCommand, "--workloads takes block and/or mlp, got '" + name + "'",
                         kUsage);
    }
    names.push_back(name);
  }
  if (names.empty()) return ReportUsage(kCommand, "--workloads is empty", kUsage);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  StatusOr<int> threads = ParseIntOption("threads", parsed->Get("threads", "2"), 2, 4096);
  StatusOr<int> spinners =
      ParseIntOption("spinners", parsed->Get("spinners", std::to_string(cores)), 1, 256);
  StatusOr<int> reps = ParseIntOption("reps", parsed->Get("reps", "8"), 1, 10000);
  StatusOr<int> batch_ms = ParseIntOption("batch-ms", parsed->Get("batch-ms", "150"), 1, 100000);
  StatusOr<int> seq = ParseIntOption("seq", parsed->Get("seq", "128"), 1, 4096);
  for (const StatusOr<int>* value : {&threads, &spinners, &reps, &batch_ms, &seq}) {
    if (!value->ok()) return ReportUsage(kCommand, std::string(value->status().message()), kUsage);
  }
  if (parsed->Has("mechanism-cost")) {
    if (parsed->Has("spinners") || parsed->Has("pin") || parsed->Has("fixed-threads")) {
      return ReportUsage(kCommand,
                         "--mechanism-cost runs without spinners and times the mechanism on and "
                         "off; it takes no --spinners, --pin or --fixed-threads",
                         kUsage);
    }
    return MechanismCost(names, *threads, *reps, *batch_ms, *seq);
  }
  return BenchLoad(names, *threads, *spinners, parsed->Has("pin"), *reps, *batch_ms, *seq,
                   parsed->Has("fixed-threads"));
}

}  // namespace accy::tools
