// The per-thread load monitor (load_monitor.h).
#include "src/runtime/load_monitor.h"

#include <fcntl.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string_view>

namespace accy {

bool LoadDecider::SampleDue(int64_t wall_ns) const {
  return !has_base_ || wall_ns - base_.wall_ns >= kSampleInterval;
}

bool LoadDecider::Update(const SchedSample& sample) {
  if (!has_base_) {
    base_ = sample;
    has_base_ = true;
    return reduced_;
  }
  const int64_t cpu = sample.cpu_ns - base_.cpu_ns;
  const int64_t wait = sample.wait_ns - base_.wait_ns;
  if (cpu < 0 || wait < 0 || sample.wall_ns < base_.wall_ns) {  // counters went back: restart
    base_ = sample;
    return reduced_;
  }
  if (cpu + wait < kMinRunnable) return reduced_;  // too little to judge: merge with the next
  const double share = static_cast<double>(wait) / static_cast<double>(cpu + wait);
  base_ = sample;
  if (!reduced_) {
    contended_ns_ = share > kEnterShare ? contended_ns_ + cpu + wait : 0;
    const bool would_reduce = contended_ns_ > 0 && (probing_ || contended_ns_ >= kEnterRunnable);
    if (would_reduce && !Oversubscribed(sample)) contended_ns_ = 0;  // nothing else wants a CPU
    if (contended_ns_ > 0 && (probing_ || contended_ns_ >= kEnterRunnable)) {
      // A contended probe lengthens the next hold; a contended steady state starts at kMinHold.
      hold_ns_ = probing_ ? std::min(kMaxHold, hold_ns_ * 2) : kMinHold;
      reduced_ = true;
      reduced_since_ns_ = sample.wall_ns;
      contended_ns_ = 0;
    } else if (probing_) {
      hold_ns_ = kMinHold;  // the probe was calm: the load is gone
    }
    probing_ = false;
    return reduced_;
  }
  if (share < kExitShare && sample.wall_ns - reduced_since_ns_ >= hold_ns_) {
    reduced_ = false;
    probing_ = true;
  }
  if (!reduced_) has_machine_base_ = false;
  return reduced_;
}

bool LoadDecider::Oversubscribed(const SchedSample& sample) const {
  return cpus_ <= 0 || sample.running < 0 || sample.running > cpus_;
}

bool LoadDecider::MachineSampleDue(int64_t wall_ns) const {
  return reduced_ && (!has_machine_base_ || wall_ns - machine_base_.wall_ns >= kMachineWindow);
}

bool LoadDecider::UpdateMachine(const MachineSample& sample) {
  if (!reduced_) {
    has_machine_base_ = false;
    return reduced_;
  }
  if (!has_machine_base_) {
    machine_base_ = sample;
    has_machine_base_ = true;
    return reduced_;
  }
  const int64_t wall = sample.wall_ns - machine_base_.wall_ns;
  const int64_t busy = sample.busy_ns - machine_base_.busy_ns;
  const int64_t idle = sample.idle_ns - machine_base_.idle_ns;
  const int64_t own = sample.process_cpu_ns - machine_base_.process_cpu_ns;
  if (wall < 0 || busy < 0 || idle < 0 || own < 0) {  // counters went back: restart the window
    machine_base_ = sample;
    return reduced_;
  }
  if (wall < kMachineWindow) return reduced_;
  machine_base_ = sample;
  const double window = static_cast<double>(wall);
  const bool free = static_cast<double>(idle) >= kFreeIdleShare * window &&
                    static_cast<double>(busy - own) <= kFreeOthersShare * window;
  if (free && sample.wall_ns - reduced_since_ns_ >= kMinHold) {
    reduced_ = false;
    probing_ = true;
    hold_ns_ = kMinHold;
    has_machine_base_ = false;
  }
  return reduced_;
}

LoadMonitor& LoadMonitor::ForThisThread() {
  thread_local LoadMonitor monitor;
  return monitor;
}

LoadMonitor::LoadMonitor() : decider_(static_cast<int>(std::max(0L, ::sysconf(_SC_NPROCESSORS_ONLN)))) {
  fd_ = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  stat_fd_ = ::open("/proc/stat", O_RDONLY | O_CLOEXEC);
  loadavg_fd_ = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

LoadMonitor::~LoadMonitor() {
  if (fd_ >= 0) ::close(fd_);
  if (stat_fd_ >= 0) ::close(stat_fd_);
  if (loadavg_fd_ >= 0) ::close(loadavg_fd_);
}

bool ParseLoadavgRunning(std::string_view text, int* running) {
  // "avg1 avg5 avg15 running/total last_pid" (proc(5)).
  size_t field = 0;
  for (int skip = 0; skip < 3; ++skip) {
    field = text.find(' ', field);
    if (field == std::string_view::npos) return false;
    field = text.find_first_not_of(' ', field);
    if (field == std::string_view::npos) return false;
  }
  const char* begin = text.data() + field;
  const char* end = text.data() + text.size();
  int count = 0;
  auto parsed = std::from_chars(begin, end, count);
  if (parsed.ec != std::errc() || parsed.ptr == begin || count < 0 || parsed.ptr >= end ||
      *parsed.ptr != '/') {
    return false;
  }
  int total = 0;
  auto second = std::from_chars(parsed.ptr + 1, end, total);
  if (second.ec != std::errc() || second.ptr == parsed.ptr + 1) return false;
  *running = count;
  return true;
}

bool ParseProcStatCpu(std::string_view text, int64_t ns_per_tick, MachineSample* sample) {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice", in clock ticks
  // (proc(5)); guest time is already part of user, so the first eight fields are read.
  if (text.substr(0, 4) != "cpu ") return false;
  const char* p = text.data() + 4;
  const char* end = text.data() + text.size();
  int64_t ticks[8] = {};
  for (int64_t& t : ticks) {
    while (p < end && *p == ' ') ++p;
    auto parsed = std::from_chars(p, end, t);
    if (parsed.ec != std::errc() || t < 0) return false;
    p = parsed.ptr;
  }
  sample->busy_ns = (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]) * ns_per_tick;
  sample->idle_ns = (ticks[3] + ticks[4]) * ns_per_tick;
  return true;
}

bool LoadMonitor::ReadMachine(MachineSample* sample) const {
  char buffer[256];
  const ssize_t n = ::pread(stat_fd_, buffer, sizeof(buffer), 0);
  if (n <= 0) return false;
  static const int64_t ns_per_tick = [] {
    const long hz = ::sysconf(_SC_CLK_TCK);
    return hz > 0 ? 1'000'000'000 / hz : 10'000'000;
  }();
  if (!ParseProcStatCpu(std::string_view(buffer, static_cast<size_t>(n)), ns_per_tick, sample)) {
    return false;
  }
  timespec process{};
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &process) != 0) return false;
  sample->process_cpu_ns = static_cast<int64_t>(process.tv_sec) * 1'000'000'000 + process.tv_nsec;
  return true;
}

bool LoadMonitor::Read(SchedSample* sample) const {
  char buffer[96];
  const ssize_t n = ::pread(fd_, buffer, sizeof(buffer), 0);
  if (n <= 0) return false;
  const char* end = buffer + n;
  auto cpu = std::from_chars(buffer, end, sample->cpu_ns);
  if (cpu.ec != std::errc() || cpu.ptr >= end || *cpu.ptr != ' ') return false;
  auto wait = std::from_chars(cpu.ptr + 1, end, sample->wait_ns);
  return wait.ec == std::errc();
}

int LoadMonitor::ThreadsForRun(int requested) {
  if (requested <= 1 || fd_ < 0) return requested;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (decider_.SampleDue(now)) {
    SchedSample sample;
    sample.wall_ns = now;
    if (!Read(&sample)) {
      ::close(fd_);
      fd_ = -1;
      return requested;
    }
    if (loadavg_fd_ >= 0 && !decider_.reduced()) {  // only a reduction consults it (~1 us)
      char buffer[128];
      const ssize_t n = ::pread(loadavg_fd_, buffer, sizeof(buffer), 0);
      if (n <= 0 || !ParseLoadavgRunning(std::string_view(buffer, static_cast<size_t>(n)),
                                         &sample.running)) {
        ::close(loadavg_fd_);
        loadavg_fd_ = -1;
      }
    }
    decider_.Update(sample);
    if (stat_fd_ >= 0 && decider_.MachineSampleDue(now)) {
      MachineSample machine;
      machine.wall_ns = now;
      if (ReadMachine(&machine)) {
        decider_.UpdateMachine(machine);
      } else {
        ::close(stat_fd_);
        stat_fd_ = -1;
      }
    }
  }
  return decider_.reduced() ? 1 : requested;
}

}  // namespace accy
