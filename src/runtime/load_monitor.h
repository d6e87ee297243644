// LoadMonitor: how many threads the next Run of a multi-threaded executable should use, from
// how long the calling thread recently waited for a CPU (docs/load.md).
//
// When other processes keep the cores busy, an OpenMP team of T threads on C cores stalls at
// every barrier on whichever member the scheduler has descheduled (libgomp spins, then sleeps;
// oneDNN's primitives split their work statically across the team), so a 2-thread run is 3-6x
// slower than a 1-thread run under the same load. The monitor reads the calling thread's
// run-queue wait from /proc/thread-self/schedstat (the kernel's per-task sched_info: time on a
// CPU, time runnable but waiting) at most once per kSampleInterval of wall time, and the
// executor runs with one thread while the waited share of the thread's runnable time is above
// kEnterShare. Each calling thread has its own monitor (thread_local): state is never shared.
#ifndef ACCY_SRC_RUNTIME_LOAD_MONITOR_H_
#define ACCY_SRC_RUNTIME_LOAD_MONITOR_H_

#include <cstdint>
#include <string_view>

namespace accy {

// One reading of a thread's scheduler counters, in nanoseconds.
struct SchedSample {
  int64_t wall_ns = 0;  // steady clock
  int64_t cpu_ns = 0;   // time on a CPU (schedstat field 1)
  int64_t wait_ns = 0;  // time runnable on a run queue, waiting for a CPU (field 2)
  // Tasks running or runnable on the whole machine at the sample, this thread included
  // (/proc/loadavg's fourth field, before the '/'); -1 when unknown.
  int running = -1;
};

// Reads the running-task count of /proc/loadavg's text ("0.67 1.41 1.68 2/106 26793": 2) into
// `running`; false when the text has no "<count>/<count>" fourth field.
bool ParseLoadavgRunning(std::string_view text, int* running);

// One reading of the whole machine's CPU time, in nanoseconds summed over all CPUs: busy (the
// /proc/stat `cpu` line's user + nice + system + irq + softirq + steal) and idle (idle +
// iowait), both counted in clock ticks by the kernel (10 ms at USER_HZ 100, so only windows of
// kMachineWindow or more are judged), and this process's CPU time over all its threads
// (CLOCK_PROCESS_CPUTIME_ID, exact).
struct MachineSample {
  int64_t wall_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  int64_t process_cpu_ns = 0;
};

// Reads the busy and idle time of /proc/stat's first line (`text` starts with it) into
// `sample` (ticks times `ns_per_tick`); false, leaving the process time untouched, when the
// line is not "cpu " followed by at least eight non-negative counts.
bool ParseProcStatCpu(std::string_view text, int64_t ns_per_tick, MachineSample* sample);

// The decision rule, a pure function of successive samples (unit-tested without load).
//
// Between two samples the thread was runnable for cpu + wait nanoseconds and waited `wait` of
// them. With R runnable threads on C cores (R > C) each waits about 1 - C/R of that: on 2
// cores, 0 when nothing else runs, 1/3 for a 1-thread run beside two busy processes, 1/2 for a
// 2-thread run beside them. The rule:
//  - full threads -> reduced when the waited share is above kEnterShare in consecutive
//    intervals that add up to at least kEnterRunnable of runnable time (a short contended
//    interval alone is a blip: another process's few milliseconds on an otherwise idle machine,
//    which cost 20 ms of one-thread runs when any single interval decided; measured on Zen 4,
//    docs/load.md). Runs longer than that decide on their own interval, as before;
//  - reduced -> full (a probe) when the share is below kExitShare and the thread has stayed
//    reduced for its hold time; the hold starts at kMinHold and doubles (up to kMaxHold) each
//    time a probe is contended again, and resets when a probe interval is calm. So a machine
//    loaded at a steady level costs at most one contended interval per kMaxHold.
//  - neither happens unless the machine is oversubscribed at the sample that would reduce: more
//    tasks running or runnable (SchedSample::running) than the decider's `cpus`. Waiting with
//    no more tasks than CPUs is this process's own placement (the team's worker woken onto the
//    caller's CPU) or a burst that has ended, and one thread would not help: the contended
//    count restarts, and a probe counts as calm. An idle 2-vCPU Zen 4 put 18-19 of 201 runs of
//    a 0.65 ms 2-thread program on one thread without this test (docs/load.md). The snapshot
//    sees this process's idle workers as not running: under a partial load (one other busy
//    task on 2 CPUs) a run that starts after its workers went to sleep is not reduced until a
//    later sample sees them run, which back-to-back runs do at once (workers spin between runs);
//  - intervals in which the thread was runnable for less than kMinRunnable (it slept between
//    runs) are merged with the next one, not judged.
//  - while reduced, the machine's CPU time is read once per kMachineWindow: a window in which
//    at least kFreeIdleShare of a CPU stayed idle and other processes used at most
//    kFreeOthersShare of a CPU means the load has gone, so the thread probes full threads at
//    once (after kMinHold) with the hold reset, instead of waiting out a hold that contended
//    probes under an earlier partial load may have doubled to kMaxHold. Under a partial load
//    (one spinner beside a 1-thread run) other processes use a whole CPU, and under the
//    process's own load (more calling threads than cores) nothing is idle: both keep the hold.
class LoadDecider {
 public:
  static constexpr int64_t kSampleInterval = 4'000'000;   // 4 ms of wall time
  static constexpr int64_t kMinRunnable = 1'000'000;      // 1 ms on a CPU or waiting
  static constexpr double kEnterShare = 0.15;
  static constexpr int64_t kEnterRunnable = 8'000'000;     // 8 ms runnable, contended
  static constexpr double kExitShare = 0.08;
  static constexpr int64_t kMinHold = 20'000'000;         // 20 ms
  static constexpr int64_t kMaxHold = 1'000'000'000;      // 1 s
  static constexpr int64_t kMachineWindow = 100'000'000;  // 100 ms: 10 clock ticks
  static constexpr double kFreeIdleShare = 0.5;
  static constexpr double kFreeOthersShare = 0.25;

  // `cpus`: the CPUs tasks compete for (online CPUs); 0 = unknown, then every contended
  // interval counts whatever SchedSample::running says.
  explicit LoadDecider(int cpus = 0) : cpus_(cpus) {}

  // Whether a sample is due at `wall_ns` (always true before the first sample).
  bool SampleDue(int64_t wall_ns) const;
  // Takes a sample; returns whether runs should now use one thread.
  bool Update(const SchedSample& sample);
  bool reduced() const { return reduced_; }
  // Whether a machine sample is due at `wall_ns`: only while reduced, at the start of a window
  // and once kMachineWindow after it.
  bool MachineSampleDue(int64_t wall_ns) const;
  // Takes a machine sample; returns whether runs should now use one thread (false when the
  // window since the last machine sample shows free CPUs and the hold's kMinHold has passed).
  bool UpdateMachine(const MachineSample& sample);

 private:
  // Whether `sample` shows more tasks than CPUs (true when either is unknown).
  bool Oversubscribed(const SchedSample& sample) const;

  int cpus_ = 0;
  bool has_base_ = false;
  SchedSample base_;
  bool reduced_ = false;
  int64_t reduced_since_ns_ = 0;
  int64_t hold_ns_ = kMinHold;
  bool probing_ = false;  // full threads after a hold: a contended interval doubles the hold
  // Runnable time of the consecutive contended intervals at full threads (not probing).
  int64_t contended_ns_ = 0;
  bool has_machine_base_ = false;  // a window started while reduced
  MachineSample machine_base_;
};

// The calling thread's monitor. ThreadsForRun(requested) is `requested`, or 1 while the thread
// is contended; requested <= 1 returns it unchanged and reads nothing. When
// /proc/thread-self/schedstat cannot be read (no /proc, a kernel without CONFIG_SCHED_INFO)
// it always returns `requested`.
class LoadMonitor {
 public:
  static LoadMonitor& ForThisThread();
  int ThreadsForRun(int requested);

  LoadMonitor(const LoadMonitor&) = delete;
  LoadMonitor& operator=(const LoadMonitor&) = delete;
  ~LoadMonitor();

 private:
  LoadMonitor();
  bool Read(SchedSample* sample) const;
  bool ReadMachine(MachineSample* sample) const;
  int fd_ = -1;
  int stat_fd_ = -1;  // /proc/stat; -1 when unreadable (then holds run their full length)
  int loadavg_fd_ = -1;  // /proc/loadavg; -1 when unreadable (then SchedSample::running is -1)
  LoadDecider decider_;
};

}  // namespace accy

#endif  // ACCY_SRC_RUNTIME_LOAD_MONITOR_H_
