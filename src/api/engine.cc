// Engine and Executable (include/accy/engine.h). Compile is one flat list of stages:
// verify -> plan (analyses, fusion, schedule) -> JIT-compile items -> assign buffers -> build the
// executor's item table and constant area.
#include "accy/engine.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "jit/compiled_program.h"
#include "kernels/onednn_isa.h"
#include "kernels/onednn_kernel.h"
#include "src/fusion/fusion_analysis.h"
#include "src/api/iterate_compile.h"
#include "src/api/writable_directory.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/planning_options.h"
#include "src/passes/work_ledger.h"
#include "src/runtime/buffer_assignment.h"
#include "src/runtime/executor.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

#include <thread>

namespace accy {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

bool IsElementwiseKind(WorkKind kind) {
  return kind == WorkKind::kElementwiseSingle || kind == WorkKind::kElementwiseFusion;
}

// For each input of an elementwise item: whether the kernel reads it only at the index it
// writes (same dims as the output and never through an elided broadcast, which may transpose
// or expand it), so the output may overwrite it in place.
std::vector<bool> SameIndexInputs(const WorkItem& item, const FusionPlan& fusion,
                                  std::span<const Value* const> inputs) {
  std::vector<const Value*> through_broadcast;
  for (const Operation* op : item.ops) {
    for (const Value* operand : op->operands()) {
      for (const Operation* def = operand->defining_op();
           def != nullptr && def->kind() == OpKind::kBroadcastInDim && fusion.IsElided(def);
           def = def->operand(0)->defining_op()) {
        through_broadcast.push_back(def->operand(0));
      }
    }
  }
  const std::vector<int64_t>& out_dims = item.output_value->type().dims();
  std::vector<bool> candidates;
  for (const Value* input : inputs) {
    candidates.push_back(input->type().dims() == out_dims &&
                         std::find(through_broadcast.begin(), through_broadcast.end(), input) ==
                             through_broadcast.end());
  }
  return candidates;
}

}  // namespace

// ---- Executable ----

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executable::~Executable() = default;

StatusOr<std::vector<Tensor>> Executable::Run(std::span<const Tensor> inputs) const {
  std::vector<Tensor> outputs;
  outputs.reserve(impl_->result_types.size());
  for (const TensorType& type : impl_->result_types) {
    ACCY_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(type));
    outputs.push_back(std::move(out));
  }
  ACCY_RETURN_IF_ERROR(impl_->Run(inputs, outputs));
  return outputs;
}

Status Executable::Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const {
  return impl_->Run(inputs, outputs);
}

const std::vector<TensorType>& Executable::parameter_types() const {
  return impl_->parameter_types;
}
const std::vector<TensorType>& Executable::result_types() const { return impl_->result_types; }
ExecutableStats Executable::Stats() const { return impl_->CurrentStats(); }
const std::string& Executable::plan_text() const { return impl_->plan_text; }

// ---- Engine ----

StatusOr<std::unique_ptr<Engine>> Engine::Create(EngineOptions options) {
  if (options.num_threads < 0) {
    return absl::InvalidArgumentError(
        StrCat("EngineOptions: num_threads is ", options.num_threads, ", expected >= 0"));
  }
  if (options.optimization_level < 0 || options.optimization_level > 3) {
    return absl::InvalidArgumentError(StrCat("EngineOptions: optimization_level is ",
                                             options.optimization_level, ", expected 0-3"));
  }
  if (options.max_while_iterations < 0) {
    return absl::InvalidArgumentError(StrCat("EngineOptions: max_while_iterations is ",
                                             options.max_while_iterations,
                                             ", expected >= 0 (0 = unbounded)"));
  }
  if (options.fast_math) {
    return absl::UnimplementedError(
        "EngineOptions: fast_math is not supported yet; accy computes to IEEE rules");
  }
  // One ISA for the process (ACCY_MAX_ISA), applied to oneDNN before its first kernel.
  ACCY_ASSIGN_OR_RETURN(Isa process_isa, kernels::ApplyOneDnnIsaCap());
  if (options.max_isa.has_value() && *options.max_isa > process_isa) {
    return absl::InvalidArgumentError(StrCat(
        "EngineOptions: max_isa ", IsaName(*options.max_isa), " asks for more than the process ISA ",
        IsaName(process_isa), " (host ", IsaName(HostIsa()), ", ACCY_MAX_ISA ",
        std::getenv("ACCY_MAX_ISA") != nullptr ? std::getenv("ACCY_MAX_ISA") : "unset", ")"));
  }
  if (!options.max_isa.has_value()) options.max_isa = process_isa;
  // The folders Compile writes are checked (and created) now, not at the first Compile.
  ACCY_RETURN_IF_ERROR(EnsureWritableDirectory(options.cache_dir, "cache_dir"));
  ACCY_RETURN_IF_ERROR(EnsureWritableDirectory(options.dump_dir, "dump_dir"));
  if (const char* env = std::getenv("ACCY_DUMP_DIR"); options.dump_dir.empty() && env != nullptr) {
    ACCY_RETURN_IF_ERROR(EnsureWritableDirectory(env, "dump_dir (from ACCY_DUMP_DIR)"));
  }
  if (options.num_threads == 0) {
    options.num_threads = std::max(1u, std::thread::hardware_concurrency());
  }
  return std::unique_ptr<Engine>(new Engine(std::move(options)));
}

StatusOr<std::unique_ptr<Executable>> Engine::Compile(const Module& module,
                                                      std::string_view entry) const {
  const auto plan_start = std::chrono::steady_clock::now();
  ACCY_RETURN_IF_ERROR(Verify(module));
  const Function* function = module.FindFunction(entry);
  if (function == nullptr) {
    return absl::InvalidArgumentError(StrCat("Compile: module has no function '", entry, "'"));
  }
  passes::PlanningOptions planning = passes::ToPlanningOptions(options_.work_allowance);
  planning.enable_fusion = options_.enable_fusion;
  // The schedule planner (the seed's) plans kernel_calls of one result; more would leave results
  // no item produces.
  for (const auto& op : function->entry_block()->operations()) {
    if (op->kind() == OpKind::kKernelCall && op->num_results() != 1) {
      return absl::UnimplementedError(
          StrCat("Compile: kernel_call ", op->GetString("call_target_name").value_or("?"), " has ",
                 op->num_results(), " results; the engine runs kernel_calls of exactly one result"));
    }
  }
  passes::WorkLedger ledger(planning);
  passes::AnalysisCache cache(&ledger);
  StatusOr<const SchedulePlan*> planned = cache.Get<SchedulePlan>(*function);
  // Only the schedule returns kUnimplemented (an op with no lowering): it is this call's failure.
  if (absl::IsUnimplemented(planned.status())) {
    return absl::UnimplementedError(StrCat("Compile: ", planned.status().message()));
  }
  ACCY_ASSIGN_OR_RETURN(const SchedulePlan* plan, std::move(planned));
  ACCY_ASSIGN_OR_RETURN(const FusionPlanAnalysis* fusion, cache.Get<FusionPlanAnalysis>(*function));
  auto impl = std::make_unique<Executable::Impl>();
  impl->stats.plan_milliseconds = MillisecondsSince(plan_start);
  impl->plan_text = plan->ToText();
  // The plan stage's dump, next to the JIT's (.ll, .s): <dump dir>/accy_<function>.plan.txt.
  std::string dump_dir = options_.dump_dir;
  if (const char* env = std::getenv("ACCY_DUMP_DIR"); dump_dir.empty() && env != nullptr) {
    dump_dir = env;
  }
  if (!dump_dir.empty()) {
    const std::string path = StrCat(dump_dir, "/accy_", function->name(), ".plan.txt");
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << impl->plan_text;
    if (!file.good()) {
      return absl::InternalError(StrCat("Compile: cannot write the plan dump '", path, "'"));
    }
  }
  for (const WorkItem& item : plan->items()) {
    ++impl->stats.work_items_by_kind[std::string(WorkKindName(item.kind))];
  }

  // Library items first: kernel_calls and the dot_general items whose dims and types map onto
  // oneDNN matmul with an optimized implementation and are at least kMinLibraryDotElementOps;
  // the other dot_generals (small, unmapped dims or types) run on the JIT's dot_general emitter
  // with the epilogue fused in the same kernel. A library dot_general whose epilogue maps onto
  // post-ops only up to some value (its library output) runs as two executor items: matmul
  // with those post-ops, then a JIT elementwise pass computing the rest of the epilogue from it
  // (in place over it when buffer assignment allows).
  const size_t item_count = plan->items().size();
  // Items planned inside a while's regions run in the while's own cond/body executables
  // (iterate_compile.h), not in this function's item list.
  std::vector<bool> nested(item_count, false);
  for (size_t i = 0; i < item_count; ++i) {
    const Operation* root = plan->items()[i].root;
    nested[i] = root != nullptr && root->parent_block() != function->entry_block();
  }
  const auto library_start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<kernels::LibraryKernel>> library(item_count);
  std::vector<bool> on_library(item_count, false);
  std::vector<const Value*> library_outputs(item_count, nullptr);  // split dot_generals
  kernels::LibraryKernelOptions library_options;
  library_options.allow_jit_epilogue = true;
  for (size_t i = 0; i < item_count; ++i) {
    const WorkItem& item = plan->items()[i];
    if (nested[i]) continue;
    if (item.kind == WorkKind::kDotGeneral) {
      kernels::DotClassification placement =
          kernels::ClassifyDotGeneral(item.ops, &fusion->plan(), library_options);
      if (placement.placement != kernels::DotPlacement::kLibrary &&
          placement.placement != kernels::DotPlacement::kLibraryWithJitEpilogue) {
        continue;
      }
    } else if (item.kind != WorkKind::kKernelCall) {
      continue;
    }
    StatusOr<kernels::LibraryKernel> created =
        kernels::LibraryKernel::Create(item, &fusion->plan(), library_options);
    // A dot_general oneDNN has only its reference implementation for runs on the JIT.
    if (item.kind == WorkKind::kDotGeneral && absl::IsUnimplemented(created.status())) continue;
    ACCY_ASSIGN_OR_RETURN(kernels::LibraryKernel kernel, std::move(created));
    library[i] = std::make_unique<kernels::LibraryKernel>(std::move(kernel));
    on_library[i] = true;
    if (item.kind == WorkKind::kDotGeneral && library[i]->outputs()[0] != item.output_value) {
      library_outputs[i] = library[i]->outputs()[0];
    }
  }

  impl->stats.library_milliseconds = MillisecondsSince(library_start);
  const auto iterate_start = std::chrono::steady_clock::now();
  jit::JitCompilerOptions jit_options;
  jit_options.cache_dir = options_.cache_dir;
  jit_options.dump_dir = options_.dump_dir;
  jit_options.optimization_level = options_.optimization_level;
  jit_options.max_isa = *options_.max_isa;
  std::unique_ptr<bool[]> skip(new bool[item_count == 0 ? 1 : item_count]);
  std::vector<CompiledIterate> iterates(item_count);
  for (size_t i = 0; i < item_count; ++i) {
    skip[i] = (on_library[i] && library_outputs[i] == nullptr) || nested[i];
    if (!nested[i] && plan->items()[i].kind == WorkKind::kIterate) {
      ACCY_ASSIGN_OR_RETURN(iterates[i], CompileIterate(*this, *plan->items()[i].root, i));
      skip[i] = true;
    }
  }
  ACCY_ASSIGN_OR_RETURN(
      impl->program,
      jit::CompiledProgram::Compile(*function, *plan, fusion->plan(), jit_options,
                                    std::span<const bool>(skip.get(), item_count),
                                    library_outputs));
  // The JIT stage includes compiling while loops' cond and body executables.
  impl->stats.compile_milliseconds = MillisecondsSince(iterate_start);

  // Every item in plan (dependency) order, JIT or library, with its buffers.
  struct Pending {
    const jit::CompiledItem* jit = nullptr;
    kernels::LibraryKernel* library = nullptr;
    const CompiledIterate* iterate = nullptr;
    const WorkItem* item = nullptr;
  };
  std::vector<Pending> pending(item_count);
  for (size_t i = 0; i < item_count; ++i) {
    pending[i].item = &plan->items()[i];
    pending[i].library = library[i].get();
    if (iterates[i].kernel != nullptr) pending[i].iterate = &iterates[i];
  }
  for (const jit::CompiledItem& compiled : impl->program->items()) {
    pending[static_cast<size_t>(compiled.item_index)].jit = &compiled;
  }
  const auto assignment_start = std::chrono::steady_clock::now();
  // Executor items in plan order: one per runnable plan item, two for a split dot_general (its
  // library kernel, then its JIT epilogue).
  enum class Part : uint8_t { kIterate, kLibrary, kJit };
  struct Step {
    size_t index;  // plan item
    Part part;
  };
  std::vector<Step> steps;
  for (size_t i = 0; i < item_count; ++i) {
    const Pending& p = pending[i];
    if (nested[i]) continue;
    if (p.iterate != nullptr) {
      steps.push_back({i, Part::kIterate});
      continue;
    }
    if (p.library != nullptr) steps.push_back({i, Part::kLibrary});
    if (p.jit != nullptr) steps.push_back({i, Part::kJit});
    ACCY_CHECK(p.library != nullptr || p.jit != nullptr);
  }
  std::vector<ItemBuffers> item_buffers;
  for (const Step& step : steps) {
    const Pending& p = pending[step.index];
    ItemBuffers buffers;
    if (step.part == Part::kIterate) {
      buffers.inputs = p.iterate->inputs;
      buffers.outputs = p.iterate->outputs;
    } else if (step.part == Part::kLibrary) {
      buffers.inputs.assign(p.library->inputs().begin(), p.library->inputs().end());
      buffers.outputs.assign(p.library->outputs().begin(), p.library->outputs().end());
      buffers.output_in_place_on.assign(p.library->output_aliases().begin(),
                                        p.library->output_aliases().end());
    } else {
      buffers.inputs = p.jit->inputs;
      buffers.outputs = p.jit->outputs;
      // A dot_general's JIT epilogue is an elementwise kernel (EmitDotEpilogueKernel).
      buffers.may_write_in_place =
          (IsElementwiseKind(p.item->kind) || p.jit->library_output != nullptr) &&
          p.jit->outputs.size() == 1;
      if (buffers.may_write_in_place) {
        buffers.in_place_candidates = SameIndexInputs(*p.item, fusion->plan(), p.jit->inputs);
      }
      // reshape and width-changing bitcast_convert keep the bytes as they are; a bitcast to or
      // from i1 packs or unpacks bits (8 stored i1 per byte), so its result has its own buffer.
      const Operation* root = p.item->root;
      const bool bool_bitcast =
          root != nullptr && root->kind() == OpKind::kBitcastConvert &&
          (IsBool(root->operand(0)->type().element_type()) ||
           IsBool(root->result(0)->type().element_type()));
      buffers.output_aliases_input = p.item->kind == WorkKind::kShape && !bool_bitcast &&
                                     (root->kind() == OpKind::kReshape ||
                                      root->kind() == OpKind::kBitcastConvert) &&
                                     p.jit->inputs.size() == 1 && p.jit->outputs.size() == 1;
    }
    item_buffers.push_back(std::move(buffers));
  }
  ACCY_ASSIGN_OR_RETURN(BufferAssignment assignment,
                        BufferAssignment::Assign(*function, item_buffers));

  int64_t iterate_peak_bytes = 0;
  for (size_t r = 0; r < steps.size(); ++r) {
    const size_t i = steps[r].index;
    const Pending& p = pending[i];
    ExecutorItem item;
    item.profile.item_index = static_cast<int64_t>(i);
    item.num_inputs = item_buffers[r].inputs.size();
    item.estimated_bytes = static_cast<int64_t>(
        std::min<uint64_t>(p.item->resources.static_total_bytes, INT64_MAX));
    item.profile.kind = std::string(WorkKindName(p.item->kind));
    item.profile.root = p.item->root != nullptr ? std::string(p.item->root->name()) : "";
    item.profile.runs_on = steps[r].part == Part::kIterate   ? "loop"
                           : steps[r].part == Part::kLibrary ? "library"
                                                             : "jit";
    if (steps[r].part == Part::kIterate) {
      item.iterate = p.iterate->kernel.get();
      iterate_peak_bytes = std::max(iterate_peak_bytes, p.iterate->kernel->peak_bytes());
      for (const auto* list : {&item_buffers[r].inputs, &item_buffers[r].outputs}) {
        for (const Value* value : *list) item.buffers.push_back(*assignment.SliceOf(value));
      }
      impl->iterate_kernels.push_back(std::move(iterates[i].kernel));
    } else if (steps[r].part == Part::kLibrary) {
      impl->library_mutexes.push_back(std::make_unique<std::mutex>());
      item.library = p.library;
      item.library_mutex = impl->library_mutexes.back().get();
      for (const auto* list : {&item_buffers[r].inputs, &item_buffers[r].outputs}) {
        for (const Value* value : *list) {
          item.buffers.push_back(*assignment.SliceOf(value));
          item.buffer_bytes.push_back(static_cast<int64_t>(*value->type().ByteSize()));
        }
      }
      const int num_inputs = static_cast<int>(item_buffers[r].inputs.size());
      for (size_t o = 0; o < item_buffers[r].output_in_place_on.size(); ++o) {
        const int on = item_buffers[r].output_in_place_on[o];
        if (on >= 0) item.copy_in.emplace_back(on, num_inputs + static_cast<int>(o));
      }
    } else {
      const jit::CompiledItem& compiled = *p.jit;
      item.launch = compiled.launch;
      item.buffer_bytes = compiled.buffer_bytes;
      item.aliasing = item_buffers[r].output_aliases_input;
      item.scratch_bytes = compiled.scratch_bytes;
      impl->scratch_bytes = std::max(impl->scratch_bytes, compiled.scratch_bytes);
      for (const auto* list : {&compiled.inputs, &compiled.outputs}) {
        for (const Value* value : *list) item.buffers.push_back(*assignment.SliceOf(value));
      }
    }
    impl->items.push_back(std::move(item));
  }
  for (auto& kernel : library) {
    if (kernel != nullptr) impl->library_kernels.push_back(std::move(kernel));
  }
  impl->result_copies = assignment.result_copies();
  impl->arena_bytes = assignment.arena_bytes();
  ACCY_ASSIGN_OR_RETURN(TensorType constant_type,
                        TensorType::Create(ElementType::kU8, {assignment.constant_bytes()}));
  ACCY_ASSIGN_OR_RETURN(impl->constants, Tensor::Allocate(constant_type));
  for (const auto& [value, offset] : assignment.constants()) {
    const DenseElements* dense = value->defining_op()->GetDense("value");
    if (!dense->bytes.empty()) {
      std::memcpy(static_cast<uint8_t*>(impl->constants.data()) + offset, dense->bytes.data(),
                  dense->bytes.size());
    }
  }
  impl->parameter_types = function->parameter_types();
  impl->result_types = function->result_types();
  impl->num_threads = options_.num_threads;
  impl->stats.arena_bytes = assignment.arena_bytes();
  impl->stats.constant_bytes = assignment.constant_bytes();
  impl->stats.scratch_bytes = impl->scratch_bytes;
  impl->stats.peak_memory_bytes = assignment.arena_bytes() + impl->scratch_bytes +
                                  assignment.constant_bytes() + iterate_peak_bytes;
  if (options_.enable_profiling) {
    impl->counters = std::make_unique<ItemCounters[]>(impl->items.size());
  }
  impl->GroupIndependentItems();
  impl->stats.assignment_milliseconds = MillisecondsSince(assignment_start);
  return std::unique_ptr<Executable>(new Executable(std::move(impl)));
}

}  // namespace accy
