// `accy bench-collectives`'s measurements and their report: the variants timed, the samples
// one world collected per size, the statistics rank 0 derives from them (medians, best, paired
// ratios against the two raw Gloo baselines) and their text table / JSON object. Pure functions
// of the samples, apart from CpuWindow (reads /proc/stat). Not thread-safe; one rank uses it.
#ifndef ACCY_TOOLS_COLLECTIVES_BENCH_REPORT_H_
#define ACCY_TOOLS_COLLECTIVES_BENCH_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accy::tools::bench_report {

// The variants, in the report's order. The first two are the baselines of every ratio.
enum Variant : int {
  kGlooInPlace,     // gloo::allreduce(sum) with one buffer: the baseline of the targets
  kGlooOutOfPlace,  // the same with separate input and output buffers
  kCommunicator,    // accy's Communicator::AllReduce (Gloo, in place)
  kExecutable,      // an executable of one all_reduce of its parameter (not donated)
  kDonated,         // the same with the parameter donated (tf.aliasing_output), run in place
  kComputed,        // all_reduce(x * 2): the operand computed by the program, as a gradient is
  kMultiplyAlone,   // x * 2 alone (no collective): what kComputed does besides reducing
  kVariants
};
// "gloo::allreduce in place", ...; "gloo_in_place", ... (JSON).
const char* VariantLabel(int variant);
const char* VariantKey(int variant);
// "4 B", "4 KiB", "64 MiB", "1.5 MiB".
std::string SizeText(int64_t bytes);

// The buffers an executable's all_reduce handed the communicator (AllReduceTo) in a run.
struct Buffers {
  bool one_buffer = false;   // send == recv: reduced in place, nothing copied first
  bool into_output = false;  // recv is the run's output buffer (for donated: the input's)
  bool from_input = false;   // send is the run's input buffer
};

// One size's measurements in one world.
struct SizeReport {
  int64_t bytes = 0;
  int calls_per_sample = 1;
  // Per variant, per repetition: seconds per call, the slowest rank's.
  std::vector<double> seconds[kVariants];
  bool donated_in_place = false;     // ExecutableStats::input_output_aliases_in_place[0]
  int64_t computed_arena_bytes = 0;  // ExecutableStats::arena_bytes of all_reduce(x * 2)
  Buffers all_reduce_buffers[kVariants];  // kExecutable, kDonated, kComputed
};

// The statistics of one variant at one size. Ratios are baseline time / this time (above 1:
// faster than the baseline), medians over the repetitions of the ratio within each repetition
// (paired: both measured back to back); overhead_us the median of (this - in-place baseline).
struct VariantStats {
  double median_ms = 0;
  double best_ms = 0;
  double vs_gloo_in_place = 0;
  double vs_gloo_out_of_place = 0;
  double overhead_us = 0;
};
VariantStats StatsOf(const SizeReport& report, int variant);
// Paired median of (in-place Gloo + x * 2 alone) / all_reduce(x * 2): 1 when the program's
// all_reduce costs no more than Gloo's own beside the multiply.
double ComputedVsParts(const SizeReport& report);

// The median of `values` (0 when empty).
double Median(std::vector<double> values);

// Other processes' share of the machine's CPU time over a window: /proc/stat's busy jiffies
// minus the CPU time of the ranks (given as seconds).
class CpuWindow {
 public:
  void Begin();
  void End();
  void SubtractCpuSeconds(double seconds) { own_seconds_ += seconds; }
  // Percent of the machine, or -1 when /proc/stat could not be read.
  double OthersPercent() const;

 private:
  bool valid_ = false;
  int64_t busy0_ = 0, total0_ = 0, busy_ = 0, total_ = 0;
  double own_seconds_ = 0;
};

// The report of one world of `world` processes: a text table (a header line, then per size a
// line and one row per variant, then notes on where the executables reduced), or one JSON
// object {"processes", "repetitions", "other_cpu_percent", "sizes": [...]}.
std::string WorldText(int world, int reps, const CpuWindow& cpu,
                      const std::vector<SizeReport>& sizes);
std::string WorldJson(int world, int reps, const CpuWindow& cpu,
                      const std::vector<SizeReport>& sizes);

}  // namespace accy::tools::bench_report

#endif  // ACCY_TOOLS_COLLECTIVES_BENCH_REPORT_H_
