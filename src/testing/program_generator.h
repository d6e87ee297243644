// The differential fuzzer's program generator: random valid StableHLO programs (fuzz_program.h)
// over every op the engine lowers and every element type, with seeded inputs.
//
// Each program is a few steps; a step is one random op (elementwise, shape, gather/scatter,
// dot_general, reduce, cumsum, while, kernel_call) or a pattern the fusion rules match
// (elementwise chains, softmax and layer-norm rows, matmul + bias + activation, attention) or a
// near miss of one (another reduce dim or broadcast, an escaping intermediate). Shapes include 0,
// 1, odd and large-ish dims, bounded to GeneratorOptions::max_elements per tensor. Values carry
// what the comparison may assume (exact, or approximate with a tolerance; docs/fuzzing.md), and
// the generator keeps approximate values away from ill-conditioned ops (compare, floor, convert
// to integer, divide by, log, ...) so that a correct engine always matches. Deterministic:
// the same seed and options give the same program. Thread-safe (no shared state).
#ifndef ACCY_SRC_TESTING_PROGRAM_GENERATOR_H_
#define ACCY_SRC_TESTING_PROGRAM_GENERATOR_H_

#include <cstdint>

#include "src/testing/fuzz_program.h"

namespace accy::fuzz {

struct GeneratorOptions {
  // Steps per program: uniform in [1, max_steps].
  int max_steps = 8;
  // Elements per tensor, at most (keeps one program's run in milliseconds).
  int64_t max_elements = 4096;
  // Whether steps may be while loops and case ops (control flow), and kernel_calls (catalog kernels: matmul, softmax,
  // log_softmax, layer_norm).
  bool while_loops = true;
  bool kernel_calls = true;
};

// The relative tolerance of approximate values of `type` (docs/fuzzing.md): f64 1e-9, f32 2e-4,
// f16 2e-2, bf16 5e-2; 0 for integer and i1 types (always exact).
double ApproximateTolerance(ElementType type);

// A random valid program from `seed`. Never fails: a step that cannot be placed is retried as
// another; the program has at least one op and one output.
FuzzProgram GenerateProgram(uint64_t seed, const GeneratorOptions& options = {});

// The seed of program `index` of a run started with `run_seed` (SplitMix64 of both), so that
// one program of a long run can be regenerated alone.
uint64_t ProgramSeed(uint64_t run_seed, int64_t index);

}  // namespace accy::fuzz

#endif  // ACCY_SRC_TESTING_PROGRAM_GENERATOR_H_
