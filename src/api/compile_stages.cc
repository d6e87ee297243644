// The stages of Engine::Compile (compile_stages.h).
#include "src/api/compile_stages.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include <omp.h>

#include "src/transforms/graph_pipeline.h"
#include "src/util/file_name.h"
#include "src/util/str_cat.h"

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

// The buffers of one JIT step (the kernel's inputs and outputs, and whether the output may be
// written in place over an input or alias it).
ItemBuffers JitStepBuffers(const WorkItem& item, const jit::CompiledItem& jit,
                           const FusionPlan& fusion) {
  ItemBuffers buffers;
  buffers.inputs = jit.inputs;
  buffers.outputs = jit.outputs;
  // A dot_general's JIT epilogue is an elementwise kernel (EmitDotEpilogueKernel).
  buffers.may_write_in_place =
      (IsElementwiseKind(item.kind) || jit.library_output != nullptr) && jit.outputs.size() == 1;
  if (buffers.may_write_in_place) {
    buffers.in_place_candidates = SameIndexInputs(item, fusion, jit.inputs);
  }
  // reshape and width-changing bitcast_convert keep the bytes as they are; a bitcast to or
  // from i1 packs or unpacks bits (8 stored i1 per byte), so its result has its own buffer.
  const Operation* root = item.root;
  const bool bool_bitcast = root != nullptr && root->kind() == OpKind::kBitcastConvert &&
                            (IsBool(root->operand(0)->type().element_type()) ||
                             IsBool(root->result(0)->type().element_type()));
  buffers.output_aliases_input =
      item.kind == WorkKind::kShape && !bool_bitcast &&
      (root->kind() == OpKind::kReshape || root->kind() == OpKind::kBitcastConvert) &&
      jit.inputs.size() == 1 && jit.outputs.size() == 1;
  return buffers;
}

// Whether a zero-element `type`'s other dims, times its element width, fit in int64: the
// emitters multiply them (outer loop counts, row-major strides, byte strides) even where no
// element is touched. Tensors with elements are left to the byte-size checks of buffer
// assignment and Tensor::Allocate.
bool ZeroElementSpanFits(const TensorType& type) {
  if (type.element_count() != 0) return true;
  int64_t span = ElementByteWidth(type.element_type());
  for (int64_t dim : type.dims()) {
    if (dim != 0 && __builtin_mul_overflow(span, dim, &span)) return false;
  }
  return true;
}

Status ZeroElementSpanError(const TensorType& type, std::string_view what) {
  return absl::OutOfRangeError(
      StrCat("Compile: ", what, " has type ", type.ToString(),
             ", which has no elements, but whose other dims span more than 2^63 - 1 bytes; accy "
             "indexes every tensor by signed 64-bit element and byte strides"));
}

// Valid StableHLO allows a zero-element tensor such as tensor<0x4611686018427387904x4xf32>; the
// schedule leaves a value whose layout is not static without an item (the seed's contract), and
// the JIT's index arithmetic multiplies its strides and dims (signed overflow), so Compile
// refuses such a value up front, naming it, wherever it is (parameters, results, region
// arguments and nested ops).
Status CheckZeroElementSpans(const Function& function) {
  const std::vector<TensorType>& parameters = function.parameter_types();
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (!ZeroElementSpanFits(parameters[i]))
      return ZeroElementSpanError(parameters[i], StrCat("parameter ", i));
  }
  Status status = absl::OkStatus();
  WalkOperations(*function.entry_block(), [&](const Operation* op) {
    if (!status.ok()) return;
    for (int64_t r = 0; r < op->num_results(); ++r) {
      if (!ZeroElementSpanFits(op->result(r)->type())) {
        status = ZeroElementSpanError(op->result(r)->type(),
                                      StrCat("result ", r, " of ", OpName(op->kind())));
        return;
      }
    }
    for (int64_t g = 0; g < op->num_regions(); ++g) {
      for (const auto& block : op->region(g)->blocks()) {
        for (const Value* argument : block->arguments()) {
          if (!ZeroElementSpanFits(argument->type())) {
            status = ZeroElementSpanError(argument->type(),
                                          StrCat("a region argument of ", OpName(op->kind())));
            return;
          }
        }
      }
    }
  });
  return status;
}

}  // namespace

Status VerifyEntry(const Module& caller_module, std::string_view entry) {
  ACCY_RETURN_IF_ERROR(Verify(caller_module));
  if (caller_module.FindFunction(entry) == nullptr) {
    return absl::InvalidArgumentError(StrCat("Compile: module has no function '", entry, "'"));
  }
  return absl::OkStatus();
}

Status RunGraphPasses(const Module& caller_module, std::string_view entry,
                      std::span<const int64_t> constant_parameters, CompileState& state) {
  // The passes rewrite a copy, dropped with the state at the end of Compile: nothing an
  // executable runs reads the IR (as the caller's module may be destroyed after Compile), and a
  // program's constant payloads then live only in the executable's constant area.
  state.module = caller_module.Clone();
  GraphPipelineOptions graph;
  graph.disabled_passes = state.options.disabled_passes;
  graph.dump_dir = state.options.dump_dir;
  graph.verify_each_pass = state.options.verify_each_pass;
  graph.entry = std::string(entry);
  graph.constant_parameters.assign(constant_parameters.begin(), constant_parameters.end());
  passes::WorkLedger graph_ledger(state.planning);
  passes::AnalysisCache graph_cache(&graph_ledger);
  ACCY_RETURN_IF_ERROR(RunGraphPipeline(*state.module, graph, graph_cache));
  state.function = state.module->FindFunction(entry);
  return absl::OkStatus();
}

Status ResolveConstantParameters(std::span<const int64_t> indices, CompileState& state) {
  const int64_t count = static_cast<int64_t>(state.function->parameter_types().size());
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t index = indices[i];
    if (index < 0 || index >= count) {
      return absl::InvalidArgumentError(
          StrCat("CompileOptions: constant_parameters[", i, "] is ", index, ", but @",
                 state.function->name(), " has ", count, " parameters"));
    }
    const Value* parameter = state.function->parameter(index);
    if (std::find(state.constant_parameters.begin(), state.constant_parameters.end(),
                  parameter) != state.constant_parameters.end()) {
      return absl::InvalidArgumentError(StrCat("CompileOptions: constant_parameters lists ",
                                               index, " twice"));
    }
    state.constant_parameters.push_back(parameter);
  }
  return absl::OkStatus();
}

Status ResolveInputOutputAliases(std::span<const InputOutputAlias> aliases, CompileState& state) {
  Function* function = state.module->FindFunction(state.function->name());
  for (const InputOutputAlias& alias : aliases) {
    Status added = function->AddInputOutputAlias(alias);
    if (!added.ok()) {
      return absl::InvalidArgumentError(StrCat("CompileOptions: ", added.message()));
    }
  }
  // A declared-constant parameter keeps packed copies keyed by its address; a donated one is
  // overwritten (or read from a per-run copy), so the copies would go stale.
  for (const InputOutputAlias& alias : function->input_output_aliases()) {
    const Value* parameter = function->parameter(alias.parameter);
    if (std::find(state.constant_parameters.begin(), state.constant_parameters.end(),
                  parameter) != state.constant_parameters.end()) {
      return absl::InvalidArgumentError(StrCat(
          "CompileOptions: parameter ", alias.parameter, " is declared constant "
          "(constant_parameters) and donated to result ", alias.result,
          " (an input-output alias): a run may overwrite a donated parameter, so its values "
          "cannot stay the same across runs"));
    }
  }
  return absl::OkStatus();
}

Status PlanItems(CompileState& state) {
  const Function& function = *state.function;
  ACCY_RETURN_IF_ERROR(CheckZeroElementSpans(function));
  // The schedule planner plans kernel_calls of one result; more would leave results no item
  // produces.
  for (const auto& op : function.entry_block()->operations()) {
    if (op->kind() == OpKind::kKernelCall && op->num_results() != 1) {
      return absl::UnimplementedError(
          StrCat("Compile: kernel_call ", op->GetString("call_target_name").value_or("?"), " has ",
                 op->num_results(), " results; the engine runs kernel_calls of exactly one result"));
    }
  }
  StatusOr<const SchedulePlan*> planned = state.cache.Get<SchedulePlan>(function);
  // Only the schedule returns kUnimplemented (an op with no lowering): it is this call's failure.
  if (absl::IsUnimplemented(planned.status())) {
    return absl::UnimplementedError(StrCat("Compile: ", planned.status().message()));
  }
  ACCY_ASSIGN_OR_RETURN(state.plan, std::move(planned));
  ACCY_ASSIGN_OR_RETURN(state.fusion, state.cache.Get<FusionPlanAnalysis>(function));
  Executable::Impl& impl = *state.impl;
  impl.stats.plan_milliseconds = MillisecondsSince(state.start);
  impl.plan_text = state.plan->ToText();
  // The plan stage's dump, next to the JIT's (.ll, .s): <dump dir>/accy_<function>.plan.txt.
  if (const std::string& dump_dir = state.options.dump_dir; !dump_dir.empty()) {
    const std::string path = StrCat(dump_dir, "/accy_", SafeFileName(function.name()), ".plan.txt");
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << impl.plan_text;
    if (!file.good()) {
      return absl::InternalError(StrCat("Compile: cannot write the plan dump '", path, "'"));
    }
  }
  for (const WorkItem& item : state.plan->items()) {
    ++impl.stats.work_items_by_kind[std::string(WorkKindName(item.kind))];
  }
  state.item_count = state.plan->items().size();
  // Items planned inside a while's regions run in the while's own cond/body executables
  // (iterate_compile.h), not in this function's item list.
  state.nested.assign(state.item_count, false);
  for (size_t i = 0; i < state.item_count; ++i) {
    const Operation* root = state.plan->items()[i].root;
    state.nested[i] = root != nullptr && root->parent_block() != function.entry_block();
  }
  return absl::OkStatus();
}

// Library items: kernel_calls, triangular_solves (Eigen), rng_bit_generators (Random123), lapack
// ops (Debian's LAPACK) and the
// dot_general items whose dims and types map onto oneDNN
// matmul with an optimized implementation and are at least kMinLibraryDotElementOps; the other
// dot_generals (small, unmapped dims or types) run on the JIT's dot_general emitter with the
// epilogue fused in the same kernel. A library dot_general whose epilogue maps onto post-ops
// only up to some value (its library output) runs as two executor items: matmul with those
// post-ops, then a JIT elementwise pass computing the rest of the epilogue from it (in place
// over it when buffer assignment allows).
Status BindLibraryItems(CompileState& state) {
  const auto start = std::chrono::steady_clock::now();
  state.library.resize(state.item_count);
  state.library_single.resize(state.item_count);
  const int threads = state.options.num_threads;
  const bool single_variants = threads > 1 && state.options.reduce_threads_under_load;
  // oneDNN's brgemm matmul (among others) sizes its team from omp_get_max_threads() when the
  // primitive is created: set the ICV to the engine's thread count while binding, then restore.
  const int caller_threads = omp_get_max_threads();
  struct RestoreThreads {
    int threads;
    ~RestoreThreads() { omp_set_num_threads(threads); }
  } restore{caller_threads};
  state.library_outputs.assign(state.item_count, nullptr);
  kernels::LibraryKernelOptions library_options;
  library_options.allow_jit_epilogue = true;
  library_options.constant_parameters = state.constant_parameters;
  const FusionPlan& fusion = state.fusion->plan();
  for (size_t i = 0; i < state.item_count; ++i) {
    const WorkItem& item = state.plan->items()[i];
    if (state.nested[i]) continue;
    if (item.kind == WorkKind::kDotGeneral) {
      kernels::DotClassification placement =
          kernels::ClassifyDotGeneral(item.ops, &fusion, library_options);
      if (placement.placement != kernels::DotPlacement::kLibrary &&
          placement.placement != kernels::DotPlacement::kLibraryWithJitEpilogue) {
        continue;
      }
    } else if (item.kind != WorkKind::kKernelCall && item.kind != WorkKind::kConvolution &&
               item.kind != WorkKind::kReduceWindow && item.kind != WorkKind::kTriangularSolve &&
               item.kind != WorkKind::kRngBitGenerator && item.kind != WorkKind::kLapack) {
      continue;
    }
    omp_set_num_threads(threads);
    StatusOr<kernels::LibraryKernel> created =
        kernels::LibraryKernel::Create(item, &fusion, library_options);
    // A dot_general, convolution or reduce_window oneDNN does not map (or has only its
    // reference implementation for) runs on the JIT.
    const bool jit_alternative = item.kind == WorkKind::kDotGeneral ||
                                 item.kind == WorkKind::kConvolution ||
                                 item.kind == WorkKind::kReduceWindow;
    if (jit_alternative && absl::IsUnimplemented(created.status())) {
      continue;
    }
    ACCY_ASSIGN_OR_RETURN(kernels::LibraryKernel kernel, std::move(created));
    state.library[i] = std::make_unique<kernels::LibraryKernel>(std::move(kernel));
    // Host kernels take the run's team size when they run: the same kernel serves a run on
    // fewer threads, with no second copy of its packed weights.
    if (single_variants && state.library[i]->team_fixed_at_bind()) {
      omp_set_num_threads(1);
      // Same item, same options: the binding (buffers, post-ops, implementation) is the same,
      // only the team size oneDNN fixed differs.
      ACCY_ASSIGN_OR_RETURN(kernels::LibraryKernel single,
                            kernels::LibraryKernel::Create(item, &fusion, library_options));
      state.library_single[i] = std::make_unique<kernels::LibraryKernel>(std::move(single));
    }
    if (jit_alternative && state.library[i]->outputs()[0] != item.output_value) {
      state.library_outputs[i] = state.library[i]->outputs()[0];
    }
  }
  state.impl->stats.library_milliseconds = MillisecondsSince(start);
  return absl::OkStatus();
}

Status CompileLoops(CompileState& state) {
  state.jit_start = std::chrono::steady_clock::now();
  state.iterates.resize(state.item_count);
  state.collectives.resize(state.item_count);
  state.skip.assign(state.item_count, false);
  for (size_t i = 0; i < state.item_count; ++i) {
    state.skip[i] = (state.library[i] != nullptr && state.library_outputs[i] == nullptr) ||
                    state.nested[i];
    if (!state.nested[i] && state.plan->items()[i].kind == WorkKind::kIterate) {
      ACCY_ASSIGN_OR_RETURN(state.iterates[i],
                            CompileIterate(state.engine, *state.plan->items()[i].root, i,
                                           state.module->num_replicas(),
                                           state.module->num_partitions()));
      state.skip[i] = true;
    }
    if (!state.nested[i] && state.plan->items()[i].kind == WorkKind::kCollective) {
      ACCY_ASSIGN_OR_RETURN(
          state.collectives[i],
          CollectiveKernel::Create(*state.plan->items()[i].root,
                                   collectives::Grid{state.module->num_replicas(),
                                                     state.module->num_partitions()},
                                   &state.engine));
      state.skip[i] = true;
    }
  }
  return absl::OkStatus();
}

Status CompileJitItems(CompileState& state) {
  jit::JitCompilerOptions jit_options;
  jit_options.cache_dir = state.options.cache_dir;
  jit_options.dump_dir = state.options.dump_dir;
  jit_options.optimization_level = state.options.optimization_level;
  jit_options.max_isa = *state.options.max_isa;
  jit_options.compile_threads = state.options.num_threads;
  jit_options.object_cache = state.object_cache;
  std::unique_ptr<bool[]> skip(new bool[std::max<size_t>(1, state.item_count)]);
  for (size_t i = 0; i < state.item_count; ++i) skip[i] = state.skip[i];
  Executable::Impl& impl = *state.impl;
  ACCY_ASSIGN_OR_RETURN(impl.program, jit::CompiledProgram::Compile(
                                          *state.function, *state.plan, state.fusion->plan(),
                                          jit_options,
                                          std::span<const bool>(skip.get(), state.item_count),
                                          state.library_outputs));
  // The JIT stage's time includes compiling while loops' cond and body executables.
  impl.stats.compile_milliseconds = MillisecondsSince(state.jit_start);
  impl.stats.jit_items = static_cast<int64_t>(impl.program->items().size());
  impl.stats.distinct_kernels = impl.program->distinct_kernels();
  impl.stats.kernels_compiled = impl.program->compiler().stats().modules_compiled;
  impl.stats.kernels_from_cache = impl.program->compiler().stats().modules_from_cache;
  return absl::OkStatus();
}

Status AssignItemBuffers(CompileState& state) {
  state.assignment_start = std::chrono::steady_clock::now();
  std::vector<const jit::CompiledItem*>& jit = state.jit_items;
  jit.assign(state.item_count, nullptr);
  for (const jit::CompiledItem& compiled : state.impl->program->items()) {
    jit[static_cast<size_t>(compiled.item_index)] = &compiled;
  }
  // Executor steps in plan order: one per runnable plan item, two for a split dot_general (its
  // library kernel, then its JIT epilogue).
  for (size_t i = 0; i < state.item_count; ++i) {
    if (state.nested[i]) continue;
    if (state.iterates[i].kernel != nullptr) {
      state.steps.push_back({i, StepPart::kIterate});
      continue;
    }
    if (state.collectives[i] != nullptr) {
      state.steps.push_back({i, StepPart::kCollective});
      continue;
    }
    if (state.library[i] != nullptr) state.steps.push_back({i, StepPart::kLibrary});
    if (jit[i] != nullptr) state.steps.push_back({i, StepPart::kJit});
    ACCY_CHECK(state.library[i] != nullptr || jit[i] != nullptr);
  }
  for (const CompileStep& step : state.steps) {
    ItemBuffers buffers;
    if (step.part == StepPart::kIterate) {
      buffers.inputs = state.iterates[step.index].inputs;
      buffers.outputs = state.iterates[step.index].outputs;
    } else if (step.part == StepPart::kCollective) {
      const CollectiveKernel& kernel = *state.collectives[step.index];
      buffers.inputs.assign(kernel.inputs().begin(), kernel.inputs().end());
      buffers.outputs.assign(kernel.outputs().begin(), kernel.outputs().end());
      // The kernel itself copies an operand into a result that did not get its buffer.
      buffers.output_in_place_on = kernel.OutputsInPlaceOn();
    } else if (step.part == StepPart::kLibrary) {
      const kernels::LibraryKernel& library = *state.library[step.index];
      buffers.inputs.assign(library.inputs().begin(), library.inputs().end());
      buffers.outputs.assign(library.outputs().begin(), library.outputs().end());
      buffers.output_in_place_on.assign(library.output_aliases().begin(),
                                        library.output_aliases().end());
    } else {
      buffers = JitStepBuffers(state.plan->items()[step.index], *jit[step.index],
                               state.fusion->plan());
    }
    state.item_buffers.push_back(std::move(buffers));
  }
  ACCY_ASSIGN_OR_RETURN(BufferAssignment assignment,
                        BufferAssignment::Assign(*state.function, state.item_buffers));
  state.assignment = std::move(assignment);
  return absl::OkStatus();
}

Status CheckRunMemory(const CompileState& state) {
  const int64_t limit = state.options.max_run_memory_bytes;
  if (limit == 0) return absl::OkStatus();
  int64_t scratch = 0, loops = 0;
  for (const jit::CompiledItem& compiled : state.impl->program->items()) {
    scratch = std::max(scratch, compiled.scratch_bytes);
  }
  for (const CompiledIterate& iterate : state.iterates) {
    if (iterate.kernel != nullptr) loops = std::max(loops, iterate.kernel->peak_bytes());
  }
  const int64_t arena = state.assignment->arena_bytes();
  // Each part is a byte count of tensors that exist, far below 2^62.
  const int64_t total = arena + scratch + loops;
  if (total <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(StrCat(
      "Compile: one run of function '", state.function->name(), "' needs ", total,
      " bytes (arena ", arena, ", scratch ", scratch, ", while-loop state ", loops,
      "), above EngineOptions::max_run_memory_bytes of ", limit, " bytes"));
}

StatusOr<std::unique_ptr<Executable::Impl>> BuildExecutable(CompileState& state) {
  Executable::Impl& impl = *state.impl;
  const BufferAssignment& assignment = *state.assignment;
  const std::vector<const jit::CompiledItem*>& jit = state.jit_items;
  int64_t iterate_peak_bytes = 0;
  for (size_t r = 0; r < state.steps.size(); ++r) {
    const size_t i = state.steps[r].index;
    const StepPart part = state.steps[r].part;
    const WorkItem& work = state.plan->items()[i];
    const ItemBuffers& buffers = state.item_buffers[r];
    ExecutorItem item;
    item.profile.item_index = static_cast<int64_t>(i);
    item.num_inputs = buffers.inputs.size();
    // In-place pairs (input buffer, output buffer) for input-output aliases.
    const int first_output = static_cast<int>(buffers.inputs.size());
    for (size_t k = 0; k < buffers.inputs.size() && !buffers.outputs.empty(); ++k) {
      const bool candidate =
          k >= buffers.in_place_candidates.size() || buffers.in_place_candidates[k];
      const bool same_size = buffers.inputs[k]->type().ByteSize() ==
                             buffers.outputs[0]->type().ByteSize();
      if ((buffers.may_write_in_place && candidate && same_size) ||
          (buffers.output_aliases_input && k == 0)) {
        item.in_place.emplace_back(static_cast<int>(k), first_output);
      }
    }
    for (size_t o = 0; o < buffers.output_in_place_on.size(); ++o) {
      if (buffers.output_in_place_on[o] >= 0) {
        item.in_place.emplace_back(buffers.output_in_place_on[o],
                                   first_output + static_cast<int>(o));
      }
    }
    item.estimated_bytes =
        static_cast<int64_t>(std::min<uint64_t>(work.resources.static_total_bytes, INT64_MAX));
    item.profile.kind = std::string(WorkKindName(work.kind));
    item.profile.root = work.root != nullptr ? std::string(work.root->name()) : "";
    item.profile.runs_on = part == StepPart::kIterate      ? "loop"
                           : part == StepPart::kLibrary    ? "library"
                           : part == StepPart::kCollective ? "collective"
                                                           : "jit";
    if (part == StepPart::kIterate) {
      ControlFlowKernel* kernel = state.iterates[i].kernel.get();
      item.iterate = kernel;
      iterate_peak_bytes = std::max(iterate_peak_bytes, kernel->peak_bytes());
      for (const auto* list : {&buffers.inputs, &buffers.outputs}) {
        for (const Value* value : *list) item.buffers.push_back(*assignment.SliceOf(value));
      }
      impl.iterate_kernels.push_back(std::move(state.iterates[i].kernel));
    } else if (part == StepPart::kCollective) {
      item.collective = state.collectives[i].get();
      for (const auto* list : {&buffers.inputs, &buffers.outputs}) {
        for (const Value* value : *list) item.buffers.push_back(*assignment.SliceOf(value));
      }
      impl.collective_kernels.push_back(std::move(state.collectives[i]));
    } else if (part == StepPart::kLibrary) {
      impl.library_mutexes.push_back(std::make_unique<std::mutex>());
      item.library = state.library[i].get();
      item.library_single = state.library_single[i].get();
      item.library_mutex = impl.library_mutexes.back().get();
      for (const auto* list : {&buffers.inputs, &buffers.outputs}) {
        for (const Value* value : *list) {
          item.buffers.push_back(*assignment.SliceOf(value));
          item.buffer_bytes.push_back(static_cast<int64_t>(*value->type().ByteSize()));
        }
      }
      const int num_inputs = static_cast<int>(buffers.inputs.size());
      for (size_t o = 0; o < buffers.output_in_place_on.size(); ++o) {
        const int on = buffers.output_in_place_on[o];
        if (on >= 0) item.copy_in.emplace_back(on, num_inputs + static_cast<int>(o));
      }
    } else {
      const jit::CompiledItem& compiled = *jit[i];
      item.launch = compiled.launch;
      item.buffer_bytes = compiled.buffer_bytes;
      item.aliasing = buffers.output_aliases_input;
      item.scratch_bytes = compiled.scratch_bytes;
      impl.scratch_bytes = std::max(impl.scratch_bytes, compiled.scratch_bytes);
      for (const auto* list : {&compiled.inputs, &compiled.outputs}) {
        for (const Value* value : *list) item.buffers.push_back(*assignment.SliceOf(value));
      }
    }
    impl.items.push_back(std::move(item));
  }
  for (auto* kernels : {&state.library, &state.library_single}) {
    for (auto& kernel : *kernels) {
      if (kernel == nullptr) continue;
      impl.stats.library_weight_bytes += kernel->weight_copy_bytes();
      impl.stats.library_scratch_bytes += kernel->scratch_bytes();
      impl.library_kernels.push_back(std::move(kernel));
    }
  }
  impl.result_copies = assignment.result_copies();
  impl.arena_bytes = assignment.arena_bytes();
  ACCY_ASSIGN_OR_RETURN(TensorType constant_type,
                        TensorType::Create(ElementType::kU8, {assignment.constant_bytes()}));
  ACCY_ASSIGN_OR_RETURN(impl.constants, Tensor::Allocate(constant_type));
  for (const auto& [value, offset] : assignment.constants()) {
    const DenseElements* dense = value->defining_op()->GetDense("value");
    if (!dense->bytes.empty()) {
      std::memcpy(static_cast<uint8_t*>(impl.constants.data()) + offset, dense->bytes.data(),
                  dense->bytes.size());
    }
  }
  impl.num_replicas = state.module->num_replicas();
  impl.num_partitions = state.module->num_partitions();
  WalkOperations(*state.function->entry_block(), [&](const Operation* op) {
    if (GetOpInfo(op->kind()).category == OpCategory::kCollective) impl.has_collectives = true;
  });
  impl.parameter_types = state.function->parameter_types();
  impl.result_types = state.function->result_types();
  impl.num_threads = state.options.num_threads;
  impl.reduce_threads_under_load = state.options.reduce_threads_under_load;
  impl.stats.arena_bytes = assignment.arena_bytes();
  impl.stats.constant_bytes = assignment.constant_bytes();
  impl.stats.scratch_bytes = impl.scratch_bytes;
  impl.stats.peak_memory_bytes = assignment.arena_bytes() + impl.scratch_bytes +
                                 assignment.constant_bytes() + iterate_peak_bytes;
  if (state.options.enable_profiling) {
    impl.counters = std::make_unique<ItemCounters[]>(impl.items.size());
  }
  impl.GroupIndependentItems();
  impl.OverlapCollectives();
  impl.aliases = state.function->input_output_aliases();
  impl.PlanInputOutputAliases();
  impl.stats.assignment_milliseconds = MillisecondsSince(state.assignment_start);
  return std::move(state.impl);
}

}  // namespace accy
