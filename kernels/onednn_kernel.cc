// LibraryKernel (kernels/onednn_kernel.h): creation dispatch and the run path.
#include "kernels/onednn_kernel.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/onednn_bindings.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::kernels {

struct LibraryKernel::Impl {
  BoundPrimitive bound;
  std::vector<int64_t> expected_bytes;  // per buffer
  dnnl::stream stream;
  // Prebuilt C argument array: the hot path calls dnnl_primitive_execute directly, so a run
  // builds no std::unordered_map and throws nothing.
  std::vector<dnnl_exec_arg_t> exec_args;
  // Per bound.staged entry: the reorder's {from, to} arguments.
  std::vector<std::array<dnnl_exec_arg_t, 2>> staged_args;
  // Host kernels: operand and result descriptions, data pointers set per run.
  std::vector<HostBuffer> host_operands, host_results;
};

LibraryKernel::LibraryKernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LibraryKernel::LibraryKernel(LibraryKernel&&) noexcept = default;
LibraryKernel& LibraryKernel::operator=(LibraryKernel&&) noexcept = default;
LibraryKernel::~LibraryKernel() = default;

const std::string& LibraryKernel::name() const { return impl_->bound.name; }
std::span<const Value* const> LibraryKernel::inputs() const { return impl_->bound.inputs; }
std::span<const Value* const> LibraryKernel::outputs() const { return impl_->bound.outputs; }
std::span<const int> LibraryKernel::output_aliases() const { return impl_->bound.output_aliases; }
const std::string& LibraryKernel::implementation() const { return impl_->bound.implementation; }

namespace {

// The memory `bound` owns, split as LibraryKernel::weight_copy_bytes / scratch_bytes describe:
// oneDNN's scratchpad and copies refilled every run are scratch; memory it owns otherwise
// (prepacked constants) and copies of declared-constant weights are weight copies.
struct OwnedBytes {
  int64_t weights = 0;
  int64_t scratch = 0;
};

OwnedBytes OwnedBytesOf(const BoundPrimitive& bound) {
  OwnedBytes owned{bound.host_weight_bytes, bound.host_scratch_bytes};
  for (const BoundArgument& argument : bound.arguments) {
    if (argument.buffer >= 0 || !argument.memory) continue;
    const auto bytes = static_cast<int64_t>(argument.memory.get_desc().get_size());
    (argument.arg == DNNL_ARG_SCRATCHPAD ? owned.scratch : owned.weights) += bytes;
  }
  for (const BoundPrimitive::Staged& staged : bound.staged) {
    const auto bytes = static_cast<int64_t>(staged.f32.get_desc().get_size());
    (staged.constant_source ? owned.weights : owned.scratch) += bytes;
  }
  return owned;
}

}  // namespace

int64_t LibraryKernel::weight_copy_bytes() const { return OwnedBytesOf(impl_->bound).weights; }
int64_t LibraryKernel::scratch_bytes() const { return OwnedBytesOf(impl_->bound).scratch; }

bool LibraryKernel::team_fixed_at_bind() const { return impl_->bound.host == nullptr; }

namespace {

// Wraps a BoundPrimitive: byte sizes, stream, C argument array.
StatusOr<std::unique_ptr<LibraryKernel::Impl>> MakeImpl(BoundPrimitive bound) {
  auto impl = std::make_unique<LibraryKernel::Impl>();
  for (const Value* value : bound.inputs) {
    ACCY_ASSIGN_OR_RETURN(uint64_t bytes, value->type().ByteSize());
    impl->expected_bytes.push_back(static_cast<int64_t>(bytes));
  }
  for (const Value* value : bound.outputs) {
    ACCY_ASSIGN_OR_RETURN(uint64_t bytes, value->type().ByteSize());
    impl->expected_bytes.push_back(static_cast<int64_t>(bytes));
  }
  try {
    impl->stream = dnnl::stream(CpuEngine());
  } catch (const dnnl::error& error) {
    return DnnlErrorStatus(error, bound.name, "a stream");
  }
  for (const BoundArgument& argument : bound.arguments) {
    impl->exec_args.push_back({argument.arg, argument.memory.get()});
  }
  for (const BoundPrimitive::Staged& staged : bound.staged) {
    const dnnl::memory& from = staged.output ? staged.f32 : staged.user;
    const dnnl::memory& to = staged.output ? staged.user : staged.f32;
    impl->staged_args.push_back({dnnl_exec_arg_t{DNNL_ARG_FROM, from.get()},
                                 dnnl_exec_arg_t{DNNL_ARG_TO, to.get()}});
  }
  auto describe = [](const Value* value, int64_t bytes) {
    return HostBuffer{nullptr, bytes, value->type().element_type(), value->type().dims()};
  };
  size_t slot = 0;
  for (const Value* value : bound.inputs) impl->host_operands.push_back(describe(value, impl->expected_bytes[slot++]));
  for (const Value* value : bound.outputs) impl->host_results.push_back(describe(value, impl->expected_bytes[slot++]));
  impl->bound = std::move(bound);
  return impl;
}

}  // namespace

StatusOr<LibraryKernel> LibraryKernel::CreateForKernelCall(const Operation& call) {
  ACCY_ASSIGN_OR_RETURN(BoundPrimitive bound, BindKernelCall(call));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, MakeImpl(std::move(bound)));
  return LibraryKernel(std::move(impl));
}

StatusOr<LibraryKernel> LibraryKernel::CreateForDotGeneral(std::span<const Operation* const> ops,
                                                           const FusionPlan* fusion,
                                                           const LibraryKernelOptions& options) {
  ACCY_ASSIGN_OR_RETURN(BoundPrimitive bound,
                        BindDotGeneral(ops, fusion, options, nullptr, /*classify_only=*/false));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, MakeImpl(std::move(bound)));
  return LibraryKernel(std::move(impl));
}

StatusOr<LibraryKernel> LibraryKernel::Create(const WorkItem& item, const FusionPlan* fusion,
                                              const LibraryKernelOptions& options) {
  switch (item.kind) {
    case WorkKind::kKernelCall:
      if (item.ops.size() != 1) {
        return absl::InvalidArgumentError(
            StrCat("kernel_call item ", item.id, " has ", item.ops.size(), " ops, expected 1"));
      }
      return CreateForKernelCall(*item.ops[0]);
    case WorkKind::kDotGeneral:
      return CreateForDotGeneral(item.ops, fusion, options);
    case WorkKind::kConvolution: {
      if (item.ops.empty()) {
        return absl::InvalidArgumentError(StrCat("convolution item ", item.id, " has no ops"));
      }
      if (item.resources.estimated_element_ops < options.min_convolution_element_ops) {
        return absl::UnimplementedError(
            StrCat("convolution item ", item.id, ": ", item.resources.estimated_element_ops,
                   " element ops, below the library threshold of ",
                   options.min_convolution_element_ops, " (the JIT runs it)"));
      }
      ACCY_ASSIGN_OR_RETURN(BoundPrimitive bound, BindConvolution(item.ops, fusion, options));
      ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, MakeImpl(std::move(bound)));
      return LibraryKernel(std::move(impl));
    }
    case WorkKind::kReduceWindow: {
      if (item.ops.empty()) {
        return absl::InvalidArgumentError(StrCat("reduce_window item ", item.id, " has no ops"));
      }
      ACCY_ASSIGN_OR_RETURN(BoundPrimitive bound, BindReduceWindow(item.ops, fusion, options));
      ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, MakeImpl(std::move(bound)));
      return LibraryKernel(std::move(impl));
    }
    case WorkKind::kTriangularSolve: {
      if (item.root == nullptr) {
        return absl::InvalidArgumentError(
            StrCat("triangular_solve item ", item.id, " has no root"));
      }
      ACCY_ASSIGN_OR_RETURN(BoundPrimitive bound, BindTriangularSolve(*item.root));
      ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, MakeImpl(std::move(bound)));
      return LibraryKernel(std::move(impl));
    }
    case WorkKind::kLapack: {
      if (item.root == nullptr) {
        return absl::InvalidArgumentError(StrCat("lapack item ", item.id, " has no root"));
      }
      ACCY_ASSIGN_OR_RETURN(BoundPrimitive bound, BindLapack(*item.root));
      ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, MakeImpl(std::move(bound)));
      return LibraryKernel(std::move(impl));
    }
    case WorkKind::kRngBitGenerator: {
      if (item.root == nullptr) {
        return absl::InvalidArgumentError(
            StrCat("rng_bit_generator item ", item.id, " has no root"));
      }
      ACCY_ASSIGN_OR_RETURN(BoundPrimitive bound, BindRngBitGenerator(*item.root));
      ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, MakeImpl(std::move(bound)));
      return LibraryKernel(std::move(impl));
    }
    default:
      return absl::InvalidArgumentError(
          StrCat("work item ", item.id, " of kind ", WorkKindName(item.kind),
                 " is not a library kind (kernel_call, dot_general, convolution, "
                 "reduce_window, triangular_solve, rng_bit_generator, lapack)"));
  }
}

bool IsConstantParameter(const LibraryKernelOptions& options, const Value* value) {
  return std::find(options.constant_parameters.begin(), options.constant_parameters.end(),
                   value) != options.constant_parameters.end();
}

DotClassification ClassifyDotGeneral(std::span<const Operation* const> ops,
                                     const FusionPlan* fusion,
                                     const LibraryKernelOptions& options) {
  DotClassification classification;
  (void)BindDotGeneral(ops, fusion, options, &classification, /*classify_only=*/true);
  return classification;
}

Status LibraryKernel::Run(void* const* buffers, const int64_t* buffer_bytes,
                          int64_t buffer_count) {
  Impl& impl = *impl_;
  const BoundPrimitive& bound = impl.bound;
  const int64_t expected_count = static_cast<int64_t>(impl.expected_bytes.size());
  if (buffer_count != expected_count) {
    return absl::InvalidArgumentError(StrCat(bound.name, ": got ", buffer_count,
                                             " buffers, expected ", expected_count));
  }
  for (int64_t i = 0; i < expected_count; ++i) {
    if (buffer_bytes[i] != impl.expected_bytes[static_cast<size_t>(i)] ||
        (buffers[i] == nullptr && buffer_bytes[i] != 0)) {
      return absl::InvalidArgumentError(
          StrCat(bound.name, ": buffer ", i, " has ", buffer_bytes[i], " bytes at ",
                 buffers[i] == nullptr ? "null" : "a valid pointer", ", expected ",
                 impl.expected_bytes[static_cast<size_t>(i)], " bytes"));
    }
  }
  const int64_t num_inputs = static_cast<int64_t>(bound.inputs.size());
  for (size_t r = 0; r < bound.output_aliases.size(); ++r) {
    const int alias = bound.output_aliases[r];
    if (alias >= 0 && buffers[num_inputs + static_cast<int64_t>(r)] != buffers[alias]) {
      return absl::InvalidArgumentError(StrCat(bound.name, ": output ", r, " is in place on input ",
                                               alias, " and must get the same buffer"));
    }
  }
  if (bound.zero_fill_output && buffer_bytes[num_inputs] > 0) {
    std::memset(buffers[num_inputs], 0, static_cast<size_t>(buffer_bytes[num_inputs]));
  }
  if (bound.host) {
    for (size_t i = 0; i < impl.host_operands.size(); ++i) impl.host_operands[i].data = buffers[i];
    for (size_t r = 0; r < impl.host_results.size(); ++r) {
      impl.host_results[r].data = buffers[static_cast<size_t>(num_inputs) + r];
    }
    Status status = bound.host->run(HostKernelArgs{impl.host_operands, impl.host_results});
    if (!status.ok()) {
      return Status(status.code(), StrCat(bound.name, ": ", status.message()));
    }
    return absl::OkStatus();
  }
  if (!bound.primitive) return absl::OkStatus();
  for (const BoundArgument& argument : bound.arguments) {
    if (argument.buffer < 0) continue;
    dnnl_status_t status =
        dnnl_memory_set_data_handle_v2(argument.memory.get(), buffers[argument.buffer], nullptr);
    if (status != dnnl_success) {
      return absl::InternalError(StrCat(bound.name, ": oneDNN could not bind buffer ",
                                        argument.buffer, " (status ", static_cast<int>(status), ")"));
    }
  }
  dnnl_status_t status = dnnl_success;
  for (const BoundPrimitive::Staged& staged : bound.staged) {
    status = dnnl_memory_set_data_handle_v2(staged.user.get(), buffers[staged.buffer], nullptr);
    if (status != dnnl_success) {
      return absl::InternalError(StrCat(bound.name, ": oneDNN could not bind buffer ",
                                        staged.buffer, " (status ", static_cast<int>(status), ")"));
    }
  }
  // Staged bf16/f16 inputs widen to their f32 copies, the primitive runs over f32, and staged
  // outputs round back (onednn_common.h, LowPrecision::kStagedAsF32).
  // A copy of a declared-constant parameter is refilled only from a new address.
  auto run_reorders = [&](bool outputs) {
    for (size_t s = 0; s < impl.bound.staged.size() && status == dnnl_success; ++s) {
      BoundPrimitive::Staged& staged = impl.bound.staged[s];
      if (staged.output != outputs) continue;
      const void* source = buffers[staged.buffer];
      if (staged.constant_source && staged.filled_from == source) continue;
      staged.filled_from = nullptr;
      const BoundPrimitive::Staged::RowCopy& rows = staged.row_copy;
      if (rows.rows > 0) {
        void* copy = staged.f32.get_data_handle();
        if (outputs) {
          CopyRows(copy, rows.copy_stride, buffers[staged.buffer], rows.buffer_stride, rows.rows,
                   rows.row_bytes);
        } else {
          CopyRows(source, rows.buffer_stride, copy, rows.copy_stride, rows.rows, rows.row_bytes);
        }
      } else {
        status = dnnl_primitive_execute(staged.reorder.get(), impl.stream.get(), 2,
                                        impl.staged_args[s].data());
      }
      if (status == dnnl_success && staged.constant_source) staged.filled_from = source;
    }
  };
  run_reorders(false);
  if (status == dnnl_success) {
    status = dnnl_primitive_execute(bound.primitive.get(), impl.stream.get(),
                                    static_cast<int>(impl.exec_args.size()), impl.exec_args.data());
  }
  run_reorders(true);
  if (status == dnnl_success) status = dnnl_stream_wait(impl.stream.get());
  if (status != dnnl_success) {
    return absl::InternalError(StrCat(bound.name, ": oneDNN execution failed (status ",
                                      static_cast<int>(status), ")"));
  }
  if (bound.nan_rows.extent > 0) FillRowsHoldingNan(buffers[num_inputs], bound.nan_rows);
  return absl::OkStatus();
}

}  // namespace accy::kernels
