"""Timing for the peer comparison, the same method as accy-compare-runner's: warm-up calls until
both `warmup` calls and `warmup_s` seconds are done, an inner loop calibrated so one repetition
takes about `target_s`, then `reps` timed repetitions; returns per-call milliseconds (median, min,
max) and the inner count.

Why a warm-up of at least a second (bench/README.md, "Timing"): on the 2-vCPU VMs the first
~0.3-0.5 s of 2-thread work after a process starts its team run slower (capped 1024^3 matmul:
medians 10.9-11.6 ms with 5 warm-up calls, 8.9-9.5 ms after 100, five interleaved pairs), so a
fixed 5-call warm-up timed the 20-ms workloads of one engine in that phase and not another's."""
import os
import statistics
import time


def time_calls(fn, reps=25, warmup=5, target_s=0.02, warmup_s=1.0):
    start = time.perf_counter()
    calls = 0
    while calls < warmup or time.perf_counter() - start < warmup_s:
        fn()
        calls += 1
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    inner = max(1, int(target_s / max(one, 1e-7)))
    per_call_ms = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        per_call_ms.append((time.perf_counter() - t0) * 1e3 / inner)
    return dict(ms_median=statistics.median(per_call_ms), ms_min=min(per_call_ms),
                ms_max=max(per_call_ms), reps=reps, inner=inner)


def load_average():
    """1-minute load average: above ~0.5 on this 2-core box means others were running."""
    return os.getloadavg()[0]


def busy_fraction(seconds=0.3):
    """Fraction of all CPUs busy (any process) over `seconds`, from /proc/stat."""
    def read():
        fields = list(map(int, open("/proc/stat").readline().split()[1:]))
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait
    total0, idle0 = read()
    time.sleep(seconds)
    total1, idle1 = read()
    return 1.0 - (idle1 - idle0) / max(1, total1 - total0)


def wait_idle(max_wait_s=60, threshold=0.15):
    """Waits until other processes use less than `threshold` of the CPUs (a shared 2-core box),
    at most max_wait_s seconds; returns the last busy fraction seen."""
    deadline = time.time() + max_wait_s
    busy = busy_fraction()
    while busy >= threshold and time.time() < deadline:
        time.sleep(1.0)
        busy = busy_fraction()
    return busy


def cpu_snapshot():
    """(all-CPU busy jiffies, all-CPU total jiffies, this process's and its children's CPU
    seconds) for others_busy_fraction."""
    fields = list(map(int, open("/proc/stat").readline().split()[1:]))
    t = os.times()
    return (sum(fields) - fields[3] - fields[4], sum(fields),
            t.user + t.system + t.children_user + t.children_system)


def others_busy_fraction(before, after):
    """Fraction of all CPUs that processes other than this one and its children used between two
    cpu_snapshot()s: the background load a measurement ran under."""
    hz = os.sysconf("SC_CLK_TCK")
    total = max(1, after[1] - before[1])
    ours = (after[2] - before[2]) * hz
    return max(0.0, (after[0] - before[0] - ours) / total)
