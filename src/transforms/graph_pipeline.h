// The graph pass pipeline Engine::Compile runs on its own copy of the caller's module before
// planning (XLA's HloPassPipeline in cpu_compiler.cc, Halide's lower_impl): a flat list of
// rewrites, each switchable by name and dumped after it runs. The passes and their order:
//   expand-batch-norm                 batch_norm_* ops become their elementwise and reduce ops
//   sink-constants-into-regions       region bodies get copies of the constants they capture
//   broadcast-splat-constants         splat constants become broadcasts of a scalar constant
//   assign-convolution-layouts        convolutions go channels-last, layout transposes sunk
//   simplify-layout-chains            collapse reshape/transpose/broadcast/convert chains
//   canonicalize-row-broadcasts       keepdims row values (R x 1) computed as R, read through
//                                     row broadcasts
//   fold-constants                    small ops of constants become constants (exact ops only)
//   fold-transpose-into-dot-general   dot_generals read past transposes of their operands
//   eliminate-common-subexpressions   merge ops that compute the same thing
//   simplify-arithmetic               exact identities: x * 1, x + -0.0, not(not(x)), ...
//   eliminate-dead-code               erase ops nothing uses
// Stateless functions; the module is mutated in place by one thread.
#ifndef ACCY_SRC_TRANSFORMS_GRAPH_PIPELINE_H_
#define ACCY_SRC_TRANSFORMS_GRAPH_PIPELINE_H_

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/passes/analysis_cache.h"

namespace accy {

struct GraphPipelineOptions {
  // Names of passes to skip (each must be one of GraphPassNames()).
  std::vector<std::string> disabled_passes;
  // Folder for dumps ("" = none): after each pass that ran, the module as StableHLO text in
  // <dump_dir>/accy_<module>.<NN>-<pass>.mlir (NN counts the passes run, from 01; <module> is
  // the module's name through SafeFileName, src/util/file_name.h); the module as it arrived is
  // <dump_dir>/accy_<module>.00-input.mlir.
  std::string dump_dir;
  // The entry function and the indices of its parameters the caller declared constant
  // (CompileOptions::constant_parameters; indices out of range are ignored here and rejected
  // later): assign-convolution-layouts treats their values as weights it may move off the run
  // path.
  std::string entry;
  std::vector<int64_t> constant_parameters;
  // Verify the module after every pass that ran (EngineOptions::verify_each_pass), naming the
  // pass that left it invalid; otherwise it is verified once, after the last pass.
  bool verify_each_pass = false;
  // Called with the module and the pass's name after each pass that ran, before the dump and
  // the verification (tests use it to stand for a pass that breaks the module). Optional.
  std::function<void(Module&, std::string_view pass)> after_each_pass;
};

// The pipeline's pass names, in the order they run.
std::vector<std::string_view> GraphPassNames();

// kInvalidArgument naming the first entry of `names` that is not a pass of the pipeline, and
// listing the passes.
Status CheckGraphPassNames(std::span<const std::string> names);

// Status of the verifier (Verify, accy/ir.h) on `module` after graph pass `pass` ran: OK, or
// kInternal "graph pass '<pass>' left a module the verifier rejects: <the verifier's message>".
// A pass is a rewrite to an equivalent valid program, so this is an accy bug, reported instead
// of the internal checks later stages make on verified ops (ConvolutionSpecOf, ...).
Status VerifyAfterPass(const Module& module, std::string_view pass);

// Runs the enabled passes over every function of `module`, charging each run to `cache`'s
// ledger (PassManager::Run), and verifies the result (after each pass with
// `options.verify_each_pass`, else once at the end; VerifyAfterPass). Errors:
// CheckGraphPassNames's; refused or overflowing charges as PassManager::Run; VerifyAfterPass's
// kInternal (naming the pass; at the end, "the graph passes left a module the verifier rejects"); kInternal naming
// the file when a dump cannot be written.
Status RunGraphPipeline(Module& module, const GraphPipelineOptions& options,
                        passes::AnalysisCache& cache);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_GRAPH_PIPELINE_H_
