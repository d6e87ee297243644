// `accy bench-collectives` (tools/collectives_bench_command.cc launches it): all_reduce of f32
// across W processes of this host, each its own address space with its own Gloo TCP pairs on
// loopback, rendezvous through a FileStore in a temporary folder. This unit is one rank's part:
// it joins the world twice (a raw Gloo context and accy's Gloo communicator, under separate
// store prefixes), checks every variant's values, then times them interleaved and
// barrier-synchronized, and rank 0 writes the world's report.
//
// Called in a forked child process only (one rank per process); nothing here is thread-safe.
#ifndef ACCY_TOOLS_COLLECTIVES_BENCH_H_
#define ACCY_TOOLS_COLLECTIVES_BENCH_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "accy/status.h"

namespace accy::tools {

// What `accy bench-collectives` measures; the defaults are its command-line defaults.
struct CollectivesBenchConfig {
  std::vector<int> worlds = {2, 4};                      // W, processes per world, each in [2, 64]
  std::vector<int64_t> sizes = {4, int64_t{64} << 20};  // bytes reduced, multiples of 4
  int reps = 15;  // timed samples per (size, variant), interleaved across variants
  // A sample of a size whose in-place Gloo allreduce is shorter than this times that many calls
  // back to back (the same count for every variant and rank), so that the barrier before a
  // sample is paid once per ~sample_ms, not once per 4-byte call.
  int sample_ms = 20;
  // Bounds every raw Gloo call, every accy communicator call and the rendezvous: a rank that
  // dies or stalls makes the others fail within it.
  std::chrono::milliseconds timeout{30000};
  bool json = false;
  // For the error-path test: this rank SIGKILLs itself after its first timed sample (-1: none).
  int kill_rank = -1;
};

// Runs rank `rank` of a world of `world` processes meeting in the FileStore folder `store_dir`.
// Rank 0 writes the world's report (a text table, or a JSON object with config.json) to
// `report_path`. Errors: kInvalidArgument for a bad rank or world; the communicator's
// (kDeadlineExceeded, kUnavailable naming the peer or primitive); kUnavailable / kInternal
// carrying a raw Gloo call's exception; kInternal when a variant's result is not the exact
// sum, or when an executable does not run in place where it should (each names the variant,
// the size and the first wrong element).
Status RunCollectivesBenchRank(const CollectivesBenchConfig& config, int world, int rank,
                               const std::string& store_dir, const std::string& report_path);

}  // namespace accy::tools

#endif  // ACCY_TOOLS_COLLECTIVES_BENCH_H_
