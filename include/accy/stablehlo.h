// StableHLO MLIR text import: the text JAX, TensorFlow and PyTorch/XLA export, the StableHLO test
// suites and accy's own printer (PrintModule) write, read into an accy Module.
//
// The caller owns the text only for the call; the returned modules own everything they refer to.
// Every function is thread-safe (no shared state). Syntax follows MLIR's and the custom assembly
// formats of stablehlo/dialect/StablehloOps.td; semantics the StableHLO specification.
#ifndef ACCY_STABLEHLO_H_
#define ACCY_STABLEHLO_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy {

// What one parse accepts (all of it is optional text):
//  - `module @name attributes {...} { ... }`, or bare `func.func`s (an unnamed module);
//  - `func.func public|private @f(%arg0: tensor<...> {attrs}) -> (tensor<...> {attrs})` with
//    bodies; `return` / `func.return`; `call` / `func.call @f(...)`: the callee's body is inlined
//    into the caller (accy's IR has no call op), and functions reached only through calls are
//    dropped from the module (uncalled private functions are kept);
//  - every op of accy/ir.h in its pretty form (`stablehlo.add %0, %1 : tensor<4xf32>`) or MLIR's
//    generic form (`"stablehlo.gather"(...) <{...}> ({...}) : (...) -> ...`), the accy-only
//    custom_calls PrintModule writes (`@accy.cumsum`, kernel_call targets with `accy.version`),
//    and `stablehlo.dot` (read as dot_general);
//  - `loc(...)` annotations and `#loc` definitions, which are skipped; discardable attributes
//    (names with a '.', such as `mhlo.sharding`) are dropped.
//
// Errors:
//  - kInvalidArgument for malformed text, as "line:column: expected X, found Y" (lines and columns
//    1-based, counted in the whole text even for split files); for programs that break an op's
//    type rules, "line:column: " followed by the verifier's message naming the op; for uses of
//    undefined values, redefinitions, unknown callees and recursive calls.
//  - kUnimplemented for well-formed programs using what accy does not support, named: element
//    types (complex, quantized, f8, i4, ...), dynamic or unranked shapes, non-tensor types
//    (tokens, tuples), ops ("op 'stablehlo.fft' is not supported"), custom_call targets,
//    non-discardable attributes accy does not know, regions with several blocks.
//  - kResourceExhausted when constants would take more than ParseOptions allows (one constant,
//    or all of them together; the message names the bytes and the limit) or call inlining would
//    create more than kMaxParsedOps operations (a hostile file cannot exhaust memory).
//  - kInvalidArgument when a ParseOptions limit is not positive.
// Malformed text of any kind yields a status, never a crash or a hang; nesting deeper than
// kMaxParseNesting (regions, attributes, lists; and regions with the bodies of inlined calls
// and composite decompositions, counted together from the function's body) is an error.
inline constexpr int64_t kMaxParsedConstantBytes = int64_t{1} << 28;         // 256 MiB
inline constexpr int64_t kMaxParsedTotalConstantBytes = int64_t{1} << 30;    // 1 GiB
inline constexpr int64_t kMaxParsedOps = int64_t{1} << 22;
inline constexpr int kMaxParseNesting = 256;

// Limits on the constant bytes one parse call allocates: the payloads of `dense<...>` literals
// (constant ops' values, check ops' expected values, dense attributes), at their decoded size
// (element count x element width; i1 one byte per element). A splat
// `dense<1.0> : tensor<65536x65536xf32>` is counted at its expanded size before anything is
// allocated: a small file cannot make the process allocate more than these limits. (A splat
// constant of 64 KiB or more is not expanded at all: it imports as a rank-0 constant and a
// broadcast_in_dim of it, docs/load.md.) Counted twice over, against the same total: the literals as
// the text holds them (an `#alias` used N times counts once), and the constants of the modules
// built from them (a function inlined at N call sites brings its constants N times). A call on
// a `// -----` split file counts all its chunks together. The defaults let every program of the
// StableHLO conformance suite and the shared models (BERT, chess, ResNet-50; their weights are
// parameters, their constants a few MB) through.
struct ParseOptions {
  // Bytes one constant may take; > 0.
  int64_t max_constant_bytes = kMaxParsedConstantBytes;
  // Bytes all constants of one call may take together (each of the two counts above); > 0.
  int64_t max_total_constant_bytes = kMaxParsedTotalConstantBytes;
};

// Parses one module. Check ops (`check.expect_*`, `custom_call @check.expect_*`) are dropped;
// use ParseStableHloProgram to keep them. Errors as above.
StatusOr<std::unique_ptr<Module>> ParseStableHlo(std::string_view text,
                                                 const ParseOptions& options = {});

// Parses a file of several modules separated by lines starting with `// -----` (MLIR's
// -split-input-file convention), each chunk its own module; errors as above, for the first chunk
// that fails.
StatusOr<std::vector<std::unique_ptr<Module>>> ParseStableHloSplit(
    std::string_view text, const ParseOptions& options = {});

// The StableHLO test suites' check ops, kept for a conformance runner to evaluate.
enum class CheckKind : uint8_t {
  kExpectEq,             // check.expect_eq(actual, expected): IEEE ==
  kExpectClose,          // check.expect_close(actual, expected): within a few ULP
  kExpectAlmostEq,       // check.expect_almost_eq(actual, expected): |a - e| <= tolerance
  kExpectEqConst,        // check.expect_eq_const actual, dense<...>
  kExpectCloseConst,     // check.expect_close_const actual, dense<...>
  kExpectAlmostEqConst,  // check.expect_almost_eq_const actual, dense<...>
};
// "expect_eq", "expect_close", ...
std::string_view CheckKindName(CheckKind kind);

struct Check {
  CheckKind kind;
  std::string function;  // the function the check is in
  // The checked values stay alive as extra results of that function: the function returns its
  // own results first, then the check operands in check order (actual, then expected for the
  // non-const kinds). `actual_result` / `expected_result` index its results.
  int64_t actual_result = 0;
  std::optional<int64_t> expected_result;          // non-const kinds
  std::optional<DenseElements> expected_constant;  // *_const kinds
  std::optional<double> tolerance;                 // when the text gives one
  int line = 0;  // of the check op in the text
  int column = 0;
};

// interpreter.run_parallel in a test program (the StableHLO interpreter's driver of SPMD tests,
// its tests/interpret files): `function` holds it; process (r, p) of a grid of
// programs.size() replicas x programs[0].size() partitions runs function programs[r][p].
// The op's operands go to the processes in process order (r * partitions + p), each taking as
// many as its function has parameters; its results are every process's results in that order.
// `function` is imported with the op's operands as extra results [inputs_begin, inputs_begin +
// num_inputs) (after the check values) and the op's results as extra parameters
// [results_begin, results_begin + num_results) (after its own): run it once to get the inputs,
// run the processes, then run it again with their results to get the checked values.
struct ParallelRun {
  std::string function;
  std::vector<std::vector<std::string>> programs;
  int64_t inputs_begin = 0;
  int64_t num_inputs = 0;
  int64_t results_begin = 0;
  int64_t num_results = 0;
};

struct StableHloProgram {
  std::unique_ptr<Module> module;
  std::vector<Check> checks;
  std::vector<ParallelRun> parallel_runs;  // at most one per function
};

// Parses one module and keeps its check ops as `checks` (see Check for where their values go).
// Check ops are accepted only at the top level of a function body that is not itself inlined;
// elsewhere they are kUnimplemented. Other errors as ParseStableHlo.
StatusOr<StableHloProgram> ParseStableHloProgram(std::string_view text,
                                                 const ParseOptions& options = {});
// The same for `// -----` split files: one program per chunk.
StatusOr<std::vector<StableHloProgram>> ParseStableHloProgramSplit(
    std::string_view text, const ParseOptions& options = {});

}  // namespace accy

#endif  // ACCY_STABLEHLO_H_
