// The per-thread load monitor (load_monitor.h).
#include "src/runtime/load_monitor.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>

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
  return reduced_;
}

LoadMonitor& LoadMonitor::ForThisThread() {
  thread_local LoadMonitor monitor;
  return monitor;
}

LoadMonitor::LoadMonitor() { fd_ = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC); }

LoadMonitor::~LoadMonitor() {
  if (fd_ >= 0) ::close(fd_);
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
    decider_.Update(sample);
  }
  return decider_.reduced() ? 1 : requested;
}

}  // namespace accy
