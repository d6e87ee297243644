// Graceful under load: LoadDecider's rule on synthetic scheduler samples (exact transitions),
// and an executable whose calling thread competes with busy threads drops to one thread and
// still computes the same bits as an executable that never does.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/runtime/load_monitor.h"
#include "tests/test_util.h"

namespace accy {
namespace {

constexpr int64_t kMs = 1'000'000;

// A sample `wall_ms` into the test where the thread has run `cpu_ms` and waited `wait_ms`.
SchedSample At(int64_t wall_ms, int64_t cpu_ms, int64_t wait_ms) {
  return {wall_ms * kMs, cpu_ms * kMs, wait_ms * kMs};
}

TEST(LoadDeciderTest, CalmIntervalsKeepFullThreads) {
  LoadDecider decider;
  EXPECT_TRUE(decider.SampleDue(0));
  EXPECT_FALSE(decider.Update(At(0, 0, 0)));
  EXPECT_FALSE(decider.SampleDue(3 * kMs));
  EXPECT_TRUE(decider.SampleDue(4 * kMs));
  // 5 ms on a CPU, 0.5 ms waiting: a 9% share, below kEnterShare (15%).
  EXPECT_FALSE(decider.Update({5 * kMs, 5 * kMs, kMs / 2}));
  EXPECT_FALSE(decider.reduced());
}

TEST(LoadDeciderTest, ContendedIntervalReducesAndCalmOneAfterTheHoldRestores) {
  LoadDecider decider;
  decider.Update(At(0, 0, 0));
  // A 2-thread run beside two spinners: waiting half of 10 ms runnable (kEnterRunnable is 8 ms).
  EXPECT_TRUE(decider.Update(At(10, 5, 5)));
  // Still contended at one thread (a third of the time): stays reduced.
  EXPECT_TRUE(decider.Update(At(20, 12, 8)));
  // Calm, but only 15 ms after reducing (the hold is 20 ms): stays reduced.
  EXPECT_TRUE(decider.Update(At(25, 17, 8)));
  // Calm 20 ms after reducing: back to full threads.
  EXPECT_FALSE(decider.Update(At(30, 22, 8)));
}

TEST(LoadDeciderTest, ShortContendedIntervalsReduceOnlyWhenTheyAddUp) {
  LoadDecider decider;
  decider.Update(At(0, 0, 0));
  // Another process's few milliseconds on an idle machine: one short contended interval (4 ms
  // runnable, 1 waiting), then calm: full threads throughout.
  EXPECT_FALSE(decider.Update(At(4, 3, 1)));
  EXPECT_FALSE(decider.Update(At(8, 7, 1)));
  // A calm interval restarts the count: a later single blip does not reduce either.
  EXPECT_FALSE(decider.Update(At(12, 9, 3)));
  EXPECT_FALSE(decider.Update(At(16, 13, 3)));
  EXPECT_FALSE(decider.reduced());
  // Sustained load in short intervals: 4 + 4 ms contended in a row reach kEnterRunnable.
  EXPECT_FALSE(decider.Update(At(20, 15, 5)));
  EXPECT_TRUE(decider.Update(At(24, 17, 7)));
}

TEST(LoadDeciderTest, ContendedProbesDoubleTheHold) {
  LoadDecider decider;
  decider.Update(At(0, 0, 0));
  EXPECT_TRUE(decider.Update(At(10, 5, 5)));    // reduced at 10 ms, hold 20 ms
  EXPECT_FALSE(decider.Update(At(30, 15, 5)));  // calm at one thread: probe full threads
  EXPECT_TRUE(decider.Update(At(34, 17, 7)));   // a short contended probe suffices: hold 40 ms
  EXPECT_TRUE(decider.Update(At(70, 30, 7)));   // calm, 36 ms < 40 ms
  EXPECT_FALSE(decider.Update(At(80, 40, 7)));  // 46 ms: probe again
  EXPECT_FALSE(decider.Update(At(90, 50, 7)));  // calm probe: the hold resets to 20 ms
  EXPECT_TRUE(decider.Update(At(100, 55, 12)));  // contended again at 100 ms
  EXPECT_FALSE(decider.Update(At(120, 65, 12)));  // 20 ms later: probe
}

TEST(LoadDeciderTest, IdleIntervalsAreMergedNotJudged) {
  LoadDecider decider;
  decider.Update(At(0, 0, 0));
  // 100 ms of wall time but only 0.8 ms runnable (the caller slept): not judged...
  EXPECT_FALSE(decider.Update({100 * kMs, kMs / 2, 3 * kMs / 10}));
  // ...and merged with the next: 1.6 ms runnable, 0.6 ms of it waiting (37%): contended, but
  // short of kEnterRunnable,
  EXPECT_FALSE(decider.Update({110 * kMs, kMs, 6 * kMs / 10}));
  // until 8 ms of contended runnable time add up.
  EXPECT_TRUE(decider.Update({120 * kMs, 5 * kMs, 3 * kMs}));
}

// The machine over a window: `busy_ms` and `idle_ms` summed over its CPUs, `own_ms` this
// process's CPU time (all threads), `wall_ms` into the test.
MachineSample Machine(int64_t wall_ms, int64_t busy_ms, int64_t idle_ms, int64_t own_ms) {
  return {wall_ms * kMs, busy_ms * kMs, idle_ms * kMs, own_ms * kMs};
}

// Reduces at 10 ms, then three contended probes double the hold to 160 ms (as an intermittent
// partial load does, ContendedProbesDoubleTheHold): returns the wall time (ms) of the last
// reduction.
int64_t ReduceWithLongHold(LoadDecider& decider) {
  decider.Update(At(0, 0, 0));
  EXPECT_TRUE(decider.Update(At(10, 5, 5)));     // reduced, hold 20 ms
  EXPECT_FALSE(decider.Update(At(30, 15, 5)));   // probe
  EXPECT_TRUE(decider.Update(At(34, 17, 7)));    // contended probe: hold 40 ms
  EXPECT_FALSE(decider.Update(At(74, 37, 7)));   // probe
  EXPECT_TRUE(decider.Update(At(78, 39, 9)));    // hold 80 ms
  EXPECT_FALSE(decider.Update(At(158, 79, 9)));  // probe
  EXPECT_TRUE(decider.Update(At(162, 81, 11)));  // hold 160 ms from 162 ms
  return 162;
}

TEST(LoadDeciderTest, MachineSamplesAreTakenOnlyWhileReducedOncePerWindow) {
  LoadDecider decider;
  decider.Update(At(0, 0, 0));
  EXPECT_FALSE(decider.MachineSampleDue(0));
  EXPECT_TRUE(decider.Update(At(10, 5, 5)));
  EXPECT_TRUE(decider.MachineSampleDue(10 * kMs));  // the window's start
  EXPECT_TRUE(decider.UpdateMachine(Machine(10, 0, 0, 0)));
  EXPECT_FALSE(decider.MachineSampleDue(109 * kMs));
  EXPECT_TRUE(decider.MachineSampleDue(110 * kMs));
  // A window shorter than kMachineWindow is not judged, even when the machine looks free.
  EXPECT_TRUE(decider.UpdateMachine(Machine(60, 0, 100, 0)));
}

TEST(LoadDeciderTest, AFreeMachineEndsALongHoldEarly) {
  LoadDecider decider;
  const int64_t reduced_at = ReduceWithLongHold(decider);
  EXPECT_TRUE(decider.UpdateMachine(Machine(reduced_at, 1000, 1000, 500)));
  EXPECT_TRUE(decider.Update(At(166, 85, 11)));  // calm, but 4 ms into a 160 ms hold
  // The load went away: over the next 100 ms, 95 ms of the CPUs' 200 stayed idle and this
  // process's 100 ms were all the busy time. A probe at once, 60 ms before the hold ends.
  EXPECT_FALSE(decider.UpdateMachine(Machine(reduced_at + 100, 1100, 1095, 600)));
  EXPECT_FALSE(decider.reduced());
  // The probe is contended (the load came back): reduced with the hold doubled from kMinHold
  // (40 ms), not from 160 ms.
  EXPECT_TRUE(decider.Update(At(266, 87, 13)));
  EXPECT_TRUE(decider.Update(At(305, 126, 13)));   // calm, 39 ms after reducing
  EXPECT_FALSE(decider.Update(At(306, 127, 13)));  // 40 ms: probe
}

TEST(LoadDeciderTest, AMachineBusyWithOthersOrWithThisProcessKeepsTheHold) {
  for (const auto& [busy, idle, own] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {200, 0, 100},    // two spinners beside a 1-thread run: nothing idle
           {110, 90, 10},    // one spinner beside an intermittent caller: idle, but others 100 ms
           {200, 0, 200},    // this process's own load (more callers than cores): nothing idle
           {140, 60, 100}}) {  // idle 60 ms (above half a CPU), but others 40 ms: not free
    LoadDecider decider;
    const int64_t reduced_at = ReduceWithLongHold(decider);
    EXPECT_TRUE(decider.UpdateMachine(Machine(reduced_at, 0, 0, 0)));
    EXPECT_TRUE(decider.UpdateMachine(Machine(reduced_at + 100, busy, idle, own)))
        << busy << " " << idle << " " << own;
  }
}

TEST(LoadDeciderTest, MachineCountersGoingBackRestartTheWindow) {
  LoadDecider decider;
  const int64_t reduced_at = ReduceWithLongHold(decider);
  EXPECT_TRUE(decider.UpdateMachine(Machine(reduced_at, 1000, 1000, 500)));
  EXPECT_TRUE(decider.UpdateMachine(Machine(reduced_at + 100, 900, 1095, 600)));
  // The restarted window judges from the sample that went back.
  EXPECT_FALSE(decider.UpdateMachine(Machine(reduced_at + 200, 1000, 1190, 700)));
}

// `At` with the machine's running-task count (/proc/loadavg) at the sample.
SchedSample AtRunning(int64_t wall_ms, int64_t cpu_ms, int64_t wait_ms, int running) {
  SchedSample sample = At(wall_ms, cpu_ms, wait_ms);
  sample.running = running;
  return sample;
}

TEST(LoadDeciderTest, WaitingWithNoMoreTasksThanCpusDoesNotReduce) {
  LoadDecider decider(/*cpus=*/2);
  decider.Update(At(0, 0, 0));
  // Half of 10 ms waited, but only this run's two threads want the 2 CPUs: not reduced, and
  // the contended count restarts.
  EXPECT_FALSE(decider.Update(AtRunning(10, 5, 5, 2)));
  // One more contended 4 ms interval now oversubscribed: 4 ms alone is below kEnterRunnable.
  EXPECT_FALSE(decider.Update(AtRunning(14, 7, 7, 3)));
  // Another: 8 ms in a row, 4 tasks on 2 CPUs (two spinners beside the run): reduced.
  EXPECT_TRUE(decider.Update(AtRunning(18, 9, 9, 4)));
  // While reduced the count is not needed (-1: not read) and the hold runs as before.
  EXPECT_TRUE(decider.Update(At(30, 15, 11)));
  EXPECT_FALSE(decider.Update(At(40, 25, 11)));  // calm after the 20 ms hold: a probe
  // A contended probe on a machine with no more tasks than CPUs counts as calm: full threads,
  // and the hold stays at kMinHold for the next reduction.
  EXPECT_FALSE(decider.Update(AtRunning(44, 27, 13, 2)));
  EXPECT_FALSE(decider.Update(AtRunning(48, 29, 15, 3)));  // 4 ms contended: not yet
  EXPECT_TRUE(decider.Update(AtRunning(52, 31, 17, 3)));   // 8 ms: reduced at 52 ms
  EXPECT_TRUE(decider.Update(At(70, 40, 17)));             // 18 ms < the 20 ms hold
  EXPECT_FALSE(decider.Update(At(72, 42, 17)));            // 20 ms: kMinHold, not doubled
}

TEST(LoadDeciderTest, UnknownCpusOrRunningCountsKeepTheWaitRule) {
  LoadDecider unknown_cpus;  // cpus 0
  unknown_cpus.Update(At(0, 0, 0));
  EXPECT_TRUE(unknown_cpus.Update(AtRunning(10, 5, 5, 1)));
  LoadDecider unknown_running(/*cpus=*/2);
  unknown_running.Update(At(0, 0, 0));
  EXPECT_TRUE(unknown_running.Update(At(10, 5, 5)));  // running -1: /proc/loadavg unreadable
}

TEST(LoadavgTest, ReadsTheRunningCount) {
  int running = -1;
  ASSERT_TRUE(ParseLoadavgRunning("0.67 1.41 1.68 2/106 26793\n", &running));
  EXPECT_EQ(running, 2);
  ASSERT_TRUE(ParseLoadavgRunning("12.00  9.50 3.25 17/2048 1", &running));
  EXPECT_EQ(running, 17);
}

TEST(LoadavgTest, RejectsTextWithoutARunningOverTotalField) {
  int running = 7;
  EXPECT_FALSE(ParseLoadavgRunning("", &running));
  EXPECT_FALSE(ParseLoadavgRunning("0.67 1.41 1.68", &running));
  EXPECT_FALSE(ParseLoadavgRunning("0.67 1.41 1.68 2 106", &running));   // no '/'
  EXPECT_FALSE(ParseLoadavgRunning("0.67 1.41 1.68 x/106 1", &running));
  EXPECT_FALSE(ParseLoadavgRunning("0.67 1.41 1.68 -2/106 1", &running));
  EXPECT_FALSE(ParseLoadavgRunning("0.67 1.41 1.68 2/ 1", &running));
  EXPECT_EQ(running, 7);  // untouched
}

TEST(ProcStatTest, ReadsBusyAndIdleTicksOfTheCpuLine) {
  MachineSample sample;
  ASSERT_TRUE(ParseProcStatCpu("cpu  10 1 5 100 2 3 4 6 7 0\ncpu0 5 0 2 50 1 1 2 3 3 0\n", 10'000'000,
                               &sample));
  EXPECT_EQ(sample.busy_ns, (10 + 1 + 5 + 3 + 4 + 6) * 10'000'000LL);  // guest is in user
  EXPECT_EQ(sample.idle_ns, (100 + 2) * 10'000'000LL);
  // An old kernel's line with exactly eight fields.
  ASSERT_TRUE(ParseProcStatCpu("cpu 1 0 0 9 0 0 0 0", 1, &sample));
  EXPECT_EQ(sample.busy_ns, 1);
  EXPECT_EQ(sample.idle_ns, 9);
}

TEST(ProcStatTest, RejectsWhatIsNotACpuLine) {
  MachineSample sample;
  EXPECT_FALSE(ParseProcStatCpu("", 1, &sample));
  EXPECT_FALSE(ParseProcStatCpu("cpu0 1 2 3 4 5 6 7 8", 1, &sample));  // a per-CPU line
  EXPECT_FALSE(ParseProcStatCpu("intr 1 2 3", 1, &sample));
  EXPECT_FALSE(ParseProcStatCpu("cpu  1 2 3 4 5 6 7", 1, &sample));  // seven fields
  EXPECT_FALSE(ParseProcStatCpu("cpu  1 2 x 4 5 6 7 8", 1, &sample));
  EXPECT_FALSE(ParseProcStatCpu("cpu  1 2 -3 4 5 6 7 8", 1, &sample));
}

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// relu(x @ w + b) then a sum: a oneDNN matmul (2*64*256*256 element ops) and JIT items.
std::unique_ptr<Module> Program() {
  Builder builder("load");
  FunctionBuilder f = *builder.BeginFunction(
      "main", {F32({64, 256}), F32({256, 256}), F32({256})}, {F32({64, 256}), F32({})});
  Value* prod = *f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({64, 256}), {1}, {0}, {}, {});
  Value* bias = *f.BroadcastInDim(f.Parameter(2), F32({64, 256}), {1});
  Value* zero = *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 0), F32({64, 256}), {});
  Value* y = *f.Maximum(*f.Add(prod, bias), zero);
  Value* s = *f.Reduce(*f.Tanh(y), *f.ConstantScalar(ElementType::kF32, 0), F32({}), "sum",
                       {0, 1});
  EXPECT_TRUE(f.Return({y, s}).ok());
  return *builder.Finish();
}

std::vector<Tensor> Inputs() {
  std::vector<Tensor> inputs;
  for (const TensorType& type : {F32({64, 256}), F32({256, 256}), F32({256})}) {
    Tensor t = *Tensor::Allocate(type);
    float* data = static_cast<float*>(t.data());
    for (int64_t i = 0; i < type.element_count(); ++i) {
      data[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

TEST(LoadAdaptationTest, ContendedRunsUseOneThreadAndComputeTheSameBits) {
  std::unique_ptr<Module> module = Program();
  EngineOptions fixed_options;
  fixed_options.num_threads = 2;
  fixed_options.reduce_threads_under_load = false;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> fixed_engine, Engine::Create(fixed_options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> fixed, fixed_engine->Compile(*module));
  EngineOptions options;
  options.num_threads = 2;
  ASSERT_TRUE(options.reduce_threads_under_load);  // the default
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> adaptive, engine->Compile(*module));
  const std::vector<Tensor> inputs = Inputs();
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, fixed->Run(inputs));

  // Busy threads, more than the cores, compete with this one for up to 2 s.
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < 2 * cores + 1; ++i) {
    spinners.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::vector<Tensor> got;
  int runs = 0;
  while (std::chrono::steady_clock::now() < deadline &&
         adaptive->Stats().runs_with_fewer_threads < 3) {
    StatusOr<std::vector<Tensor>> outputs = adaptive->Run(inputs);
    ASSERT_OK(outputs.status());
    got = *std::move(outputs);
    ++runs;
  }
  stop = true;
  for (std::thread& spinner : spinners) spinner.join();
  EXPECT_GE(adaptive->Stats().runs_with_fewer_threads, 3) << "after " << runs << " runs";
  EXPECT_EQ(fixed->Stats().runs_with_fewer_threads, 0);
  // The last run used one thread (the third reduced run ended the loop). This program's
  // matmul computes the same bits with a team of one and of two on AVX-512 (brgemm) and AVX2
  // (gemm:jit); oneDNN does not promise it for every shape (docs/load.md).
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(CompareExact(got[0], want[0]).ok);
  EXPECT_TRUE(CompareExact(got[1], want[1]).ok);
}

}  // namespace
}  // namespace accy
