// The graph pass pipeline (graph_pipeline.h).
#include "src/transforms/graph_pipeline.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>

#include "src/passes/pass_manager.h"
#include "src/transforms/assign_convolution_layouts.h"
#include "src/transforms/broadcast_splat_constants.h"
#include "src/transforms/canonicalize_attention_layouts.h"
#include "src/transforms/canonicalize_row_broadcasts.h"
#include "src/transforms/eliminate_common_subexpressions.h"
#include "src/transforms/eliminate_dead_code.h"
#include "src/transforms/expand_batch_norm.h"
#include "src/transforms/fold_constants.h"
#include "src/transforms/fold_transpose_into_dot_general.h"
#include "src/transforms/isolate_regions_from_above.h"
#include "src/transforms/simplify_arithmetic.h"
#include "src/transforms/simplify_layout_chains.h"
#include "src/transforms/sink_constants_into_regions.h"
#include "src/util/file_name.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

// The pipeline, in order: batch-norm ops expand into their decompositions first (everything
// after sees plain ops), then constants captured by region bodies are copied in and the run-time
// values they capture become operands, then convolutions go channels-last with their layout transposes sunk
// (on splat constants already made broadcasts, which it re-aims), then chains of layout changes collapse first (transpose(transpose(w))
// becomes w before the fold looks at it), then keepdims row values lose their unit dim (on
// collapsed chains: broadcast(broadcast(r)) is one broadcast by then), then small constants fold (a reshape of a constant is
// a constant the identities can read), then layout folds (they leave transposes without uses),
// then CSE (it leaves duplicates without uses, and makes maximum(x, y) with y a duplicate of x
// into maximum(x, x)), then the arithmetic identities (maximum(-inf, max(s)) goes, which stood inside
// JAX's softmax), then attention written with heads between sequence and head dim gets the
// flash rule's operand layouts (on softmax chains the passes before have simplified), then
// dead-code elimination removes what they all left.
std::vector<std::unique_ptr<passes::Pass>> AllPasses(const GraphPipelineOptions& options) {
  std::vector<std::unique_ptr<passes::Pass>> passes;
  passes.push_back(std::make_unique<ExpandBatchNormPass>());
  passes.push_back(std::make_unique<SinkConstantsIntoRegionsPass>());
  passes.push_back(std::make_unique<IsolateRegionsFromAbovePass>());
  passes.push_back(std::make_unique<BroadcastSplatConstantsPass>());
  passes.push_back(
      std::make_unique<AssignConvolutionLayoutsPass>(options.entry, options.constant_parameters));
  passes.push_back(std::make_unique<SimplifyLayoutChainsPass>());
  passes.push_back(std::make_unique<CanonicalizeRowBroadcastsPass>());
  passes.push_back(std::make_unique<FoldConstantsPass>());
  passes.push_back(std::make_unique<FoldTransposeIntoDotGeneralPass>());
  passes.push_back(std::make_unique<EliminateCommonSubexpressionsPass>());
  passes.push_back(std::make_unique<SimplifyArithmeticPass>());
  passes.push_back(std::make_unique<CanonicalizeAttentionLayoutsPass>());
  passes.push_back(std::make_unique<EliminateDeadCodePass>());
  return passes;
}

Status WriteDump(const std::string& path, const Module& module) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << PrintModule(module);
  if (!file.good()) return absl::InternalError(StrCat("Compile: cannot write the dump '", path, "'"));
  return absl::OkStatus();
}

std::string DumpPath(const std::string& dir, const Module& module, int index,
                     std::string_view pass) {
  char number[16];
  std::snprintf(number, sizeof(number), "%02d", index);
  return StrCat(dir, "/accy_", module.name().empty() ? "module" : SafeFileName(module.name()), ".",
                number, "-", pass, ".mlir");
}

}  // namespace

std::vector<std::string_view> GraphPassNames() {
  std::vector<std::string_view> names;
  for (const auto& pass : AllPasses(GraphPipelineOptions{})) names.push_back(pass->name());
  return names;
}

Status CheckGraphPassNames(std::span<const std::string> names) {
  const std::vector<std::string_view> known = GraphPassNames();
  for (const std::string& name : names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (std::string_view k : known) list += StrCat(list.empty() ? "" : ", ", k);
      return absl::InvalidArgumentError(
          StrCat("unknown graph pass '", name, "' (the passes are: ", list, ")"));
    }
  }
  return absl::OkStatus();
}

Status VerifyAfterPass(const Module& module, std::string_view pass) {
  if (Status status = Verify(module); !status.ok()) {
    return absl::InternalError(
        StrCat("graph pass '", pass, "' left a module the verifier rejects: ", status.message()));
  }
  return absl::OkStatus();
}

Status RunGraphPipeline(Module& module, const GraphPipelineOptions& options,
                        passes::AnalysisCache& cache) {
  ACCY_RETURN_IF_ERROR(CheckGraphPassNames(options.disabled_passes));
  const bool dump = !options.dump_dir.empty();
  if (dump) ACCY_RETURN_IF_ERROR(WriteDump(DumpPath(options.dump_dir, module, 0, "input"), module));
  int index = 0;
  for (std::unique_ptr<passes::Pass>& pass : AllPasses(options)) {
    const auto& disabled = options.disabled_passes;
    if (std::find(disabled.begin(), disabled.end(), pass->name()) != disabled.end()) continue;
    const std::string name(pass->name());
    // One manager per pass: the dump follows each pass over every function.
    passes::PassManager manager;
    manager.AddPass(std::move(pass));
    ACCY_RETURN_IF_ERROR(manager.Run(module, cache));
    if (options.after_each_pass) options.after_each_pass(module, name);
    ++index;
    if (dump) ACCY_RETURN_IF_ERROR(WriteDump(DumpPath(options.dump_dir, module, index, name), module));
    if (options.verify_each_pass) ACCY_RETURN_IF_ERROR(VerifyAfterPass(module, name));
  }
  if (!options.verify_each_pass && index > 0) {
    if (Status status = Verify(module); !status.ok()) {
      return absl::InternalError(StrCat("the graph passes left a module the verifier rejects (",
                                        "EngineOptions::verify_each_pass names the pass): ",
                                        status.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace accy
