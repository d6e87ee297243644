// collectives_bench_report.h: statistics and the text / JSON report of one world.
#include "tools/collectives_bench_report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "src/util/str_cat.h"
#include "tools/cli.h"

namespace accy::tools::bench_report {
namespace {

struct VariantName {
  const char* label;
  const char* key;
};
constexpr VariantName kNames[kVariants] = {
    {"gloo::allreduce in place", "gloo_in_place"},
    {"gloo::allreduce out of place", "gloo_out_of_place"},
    {"Communicator::AllReduce", "communicator"},
    {"executable all_reduce(x)", "executable"},
    {"executable all_reduce(x), x donated", "executable_donated"},
    {"executable all_reduce(x * 2)", "executable_computed"},
    {"executable x * 2 alone", "multiply_alone"},
};

std::string Format(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

// A number JSON can hold (a non-finite one, from a zero time, becomes 0).
std::string JsonNumber(double value) {
  return Format("%.6g", value == value && value - value == 0 ? value : 0.0);
}

// Median over the repetitions of f(baseline_i, this_i).
template <typename F>
double Paired(const std::vector<double>& baseline, const std::vector<double>& self, F f) {
  std::vector<double> values;
  for (size_t i = 0; i < std::min(baseline.size(), self.size()); ++i) {
    values.push_back(f(baseline[i], self[i]));
  }
  return Median(std::move(values));
}

double Ratio(double baseline, double self) { return self > 0 ? baseline / self : 0; }

// How an executable's all_reduce met its buffers, in words.
std::string BuffersText(const Buffers& b) {
  if (!b.one_buffer) {
    return StrCat("copied its operand into ", b.into_output ? "the run's output" : "a buffer",
                  ", then reduced there");
  }
  return StrCat("reduced in place with no copy, in ",
                b.into_output ? "the run's output buffer" : "a buffer of the run's arena");
}

}  // namespace

const char* VariantLabel(int variant) {
  return variant >= 0 && variant < kVariants ? kNames[variant].label : "unknown variant";
}
const char* VariantKey(int variant) {
  return variant >= 0 && variant < kVariants ? kNames[variant].key : "unknown";
}

std::string SizeText(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20) && bytes % (int64_t{1} << 20) == 0) {
    return StrCat(bytes >> 20, " MiB");
  }
  if (bytes >= (int64_t{1} << 20)) return Format("%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= 1024 && bytes % 1024 == 0) return StrCat(bytes >> 10, " KiB");
  return StrCat(bytes, " B");
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

VariantStats StatsOf(const SizeReport& report, int variant) {
  const std::vector<double>& self = report.seconds[variant];
  const std::vector<double>& in_place = report.seconds[kGlooInPlace];
  VariantStats stats;
  stats.median_ms = Median(self) * 1e3;
  stats.best_ms = self.empty() ? 0 : *std::min_element(self.begin(), self.end()) * 1e3;
  stats.vs_gloo_in_place = Paired(in_place, self, Ratio);
  stats.vs_gloo_out_of_place = Paired(report.seconds[kGlooOutOfPlace], self, Ratio);
  stats.overhead_us = Paired(in_place, self, [](double b, double s) { return (s - b) * 1e6; });
  return stats;
}

double ComputedVsParts(const SizeReport& report) {
  const std::vector<double>& gloo = report.seconds[kGlooInPlace];
  const std::vector<double>& multiply = report.seconds[kMultiplyAlone];
  std::vector<double> parts;
  for (size_t i = 0; i < std::min(gloo.size(), multiply.size()); ++i) {
    parts.push_back(gloo[i] + multiply[i]);
  }
  return Paired(parts, report.seconds[kComputed], Ratio);
}

void CpuWindow::Begin() { valid_ = MachineJiffies(&busy0_, &total0_); }

void CpuWindow::End() {
  int64_t busy1 = 0, total1 = 0;
  if (!valid_ || !MachineJiffies(&busy1, &total1)) {
    valid_ = false;
    return;
  }
  busy_ = busy1 - busy0_;
  total_ = total1 - total0_;
}

double CpuWindow::OthersPercent() const {
  if (!valid_ || total_ <= 0) return -1;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double others = static_cast<double>(busy_) - own_seconds_ * ticks;
  return 100.0 * std::max(0.0, others) / static_cast<double>(total_);
}

std::string WorldText(int world, int reps, const CpuWindow& cpu,
                      const std::vector<SizeReport>& sizes) {
  const double others = cpu.OthersPercent();
  std::string text = StrCat("W = ", world, " processes, ", reps, " repetitions",
                            others >= 0 ? Format("; other processes used %.0f%% of the machine "
                                                 "during the samples",
                                                 others)
                                        : std::string(),
                            "\n");
  for (const SizeReport& s : sizes) {
    char line[256];
    std::snprintf(line, sizeof(line), "  %-38s %10s %10s %9s %13s %12s\n",
                  StrCat(SizeText(s.bytes), ", ", s.calls_per_sample,
                         s.calls_per_sample == 1 ? " call" : " calls", " per sample")
                      .c_str(),
                  "median ms", "best ms", "vs gloo", "vs gloo out", "overhead us");
    text += line;
    for (int v = 0; v < kVariants; ++v) {
      const VariantStats st = StatsOf(s, v);
      if (v == kMultiplyAlone) {  // no collective: nothing to compare with Gloo's
        std::snprintf(line, sizeof(line), "    %-36s %10.4f %10.4f %9s %13s %12s\n",
                      VariantLabel(v), st.median_ms, st.best_ms, "-", "-", "-");
      } else {
        std::snprintf(line, sizeof(line), "    %-36s %10.4f %10.4f %9.3f %13.3f %12.1f\n",
                      VariantLabel(v), st.median_ms, st.best_ms, st.vs_gloo_in_place,
                      st.vs_gloo_out_of_place, st.overhead_us);
      }
      text += line;
    }
    text += StrCat("    all_reduce(x): ", BuffersText(s.all_reduce_buffers[kExecutable]), "\n");
    text += StrCat("    all_reduce(x), x donated: ", BuffersText(s.all_reduce_buffers[kDonated]),
                   s.donated_in_place ? " (ExecutableStats: donation in place)"
                                      : " (ExecutableStats: the parameter is copied aside)",
                   "\n");
    text += StrCat("    all_reduce(x * 2): ", BuffersText(s.all_reduce_buffers[kComputed]),
                   " (arena ", s.computed_arena_bytes, " bytes); vs gloo in place + x * 2 alone: ",
                   Format("%.3f", ComputedVsParts(s)), "\n");
  }
  return text;
}

std::string WorldJson(int world, int reps, const CpuWindow& cpu,
                      const std::vector<SizeReport>& sizes) {
  std::string json = StrCat("{\"processes\": ", world, ", \"repetitions\": ", reps,
                            ", \"other_cpu_percent\": ", JsonNumber(cpu.OthersPercent()),
                            ", \"sizes\": [");
  for (size_t i = 0; i < sizes.size(); ++i) {
    const SizeReport& s = sizes[i];
    json += StrCat(i > 0 ? ", " : "", "{\"bytes\": ", s.bytes,
                   ", \"calls_per_sample\": ", s.calls_per_sample, ", \"variants\": [");
    for (int v = 0; v < kVariants; ++v) {
      const VariantStats st = StatsOf(s, v);
      json += StrCat(v > 0 ? ", " : "", "{\"name\": \"", VariantKey(v),
                     "\", \"median_ms\": ", JsonNumber(st.median_ms),
                     ", \"best_ms\": ", JsonNumber(st.best_ms));
      if (v != kMultiplyAlone) {  // no collective: no ratios
        json += StrCat(", \"vs_gloo_in_place\": ", JsonNumber(st.vs_gloo_in_place),
                       ", \"vs_gloo_out_of_place\": ", JsonNumber(st.vs_gloo_out_of_place),
                       ", \"overhead_us\": ", JsonNumber(st.overhead_us));
      }
      json += "}";
    }
    auto buffers = [](const Buffers& b) {
      return StrCat("{\"one_buffer\": ", b.one_buffer ? "true" : "false",
                    ", \"into_output\": ", b.into_output ? "true" : "false",
                    ", \"from_input\": ", b.from_input ? "true" : "false", "}");
    };
    json += StrCat("], \"executable_buffers\": ", buffers(s.all_reduce_buffers[kExecutable]),
                   ", \"donated_buffers\": ", buffers(s.all_reduce_buffers[kDonated]),
                   ", \"donated_in_place\": ", s.donated_in_place ? "true" : "false",
                   ", \"computed_buffers\": ", buffers(s.all_reduce_buffers[kComputed]),
                   ", \"computed_arena_bytes\": ", s.computed_arena_bytes,
                   ", \"computed_vs_gloo_plus_multiply\": ", JsonNumber(ComputedVsParts(s)), "}");
  }
  return json + "]}";
}

}  // namespace accy::tools::bench_report
