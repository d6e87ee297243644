// Test helpers for kernels/: random tensors, running a LibraryKernel over host tensors, and
// building a kernel_call with extra attributes. Header-only; test sources only.
#ifndef ACCY_TESTS_KERNELS_KERNELS_TEST_UTIL_H_
#define ACCY_TESTS_KERNELS_KERNELS_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "accy/ir.h"
#include "accy/tensor.h"
#include "gtest/gtest.h"
#include "kernels/onednn_kernel.h"
#include "tests/test_util.h"

namespace accy::kernels_test {

inline TensorType T(ElementType type, std::vector<int64_t> dims) {
  return TensorType::Create(type, std::move(dims)).value();
}

// Uniform values in [lo, hi), rounded to the tensor's element type.
inline Tensor Random(const TensorType& type, uint32_t seed, double lo = -1, double hi = 1) {
  Tensor tensor = Tensor::Allocate(type).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < tensor.element_count(); ++i) tensor.SetFromDouble(i, dist(rng));
  return tensor;
}

// The tensor behind `value`: a function parameter from `args`, or a constant's payload.
inline StatusOr<Tensor> ValueTensor(const Value* value, std::span<const Tensor> args) {
  if (value->is_block_argument()) return args[static_cast<size_t>(value->index())];
  const Operation* def = value->defining_op();
  if (def != nullptr && def->kind() == OpKind::kConstant) {
    const DenseElements* dense = def->GetDense("value");
    return Tensor::FromBytes(dense->type, dense->bytes);
  }
  return absl::InvalidArgumentError("test: an input is neither a parameter nor a constant");
}

// Compiles `module`'s main on an engine of `threads` (profiling on, no load-based thread
// reduction), runs it on `inputs`, and checks that it ran as `items` library items of work kind
// `kind` and no JIT item. Returns the outputs, or none after a failure it has reported.
inline std::vector<Tensor> RunLibraryItems(const Module& module, const std::vector<Tensor>& inputs,
                                           int threads, const std::string& kind, int items = 1) {
  EngineOptions options;
  options.num_threads = threads;
  options.reduce_threads_under_load = false;
  options.enable_profiling = true;
  std::unique_ptr<Engine> engine = Engine::Create(options).value();
  StatusOr<std::unique_ptr<Executable>> exe = engine->Compile(module);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return {};
  StatusOr<std::vector<Tensor>> outputs = (*exe)->Run(inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status();
  const ExecutableStats stats = (*exe)->Stats();
  EXPECT_EQ(stats.work_items_by_kind.at(kind), items);
  EXPECT_EQ(stats.jit_items, 0);
  for (const ItemProfile& profile : stats.item_profiles) {
    EXPECT_EQ(profile.kind, kind);
    EXPECT_EQ(profile.runs_on, "library");
  }
  return outputs.ok() ? *std::move(outputs) : std::vector<Tensor>{};
}

// Runs `kernel` with its inputs taken from `args`, into fresh outputs. `in_place` gives, per
// output, the input it shares (or -1).
inline StatusOr<std::vector<Tensor>> RunKernel(kernels::LibraryKernel& kernel,
                                               std::span<const Tensor> args,
                                               std::vector<int> in_place = {}) {
  std::vector<Tensor> inputs;
  for (const Value* value : kernel.inputs()) {
    ACCY_ASSIGN_OR_RETURN(Tensor t, ValueTensor(value, args));
    ACCY_ASSIGN_OR_RETURN(Tensor copy, t.Clone());  // in-place runs must not clobber `args`
    inputs.push_back(copy);
  }
  std::vector<Tensor> outputs;
  std::vector<void*> buffers;
  std::vector<int64_t> bytes;
  for (Tensor& t : inputs) {
    buffers.push_back(t.data());
    bytes.push_back(t.byte_size());
  }
  for (size_t r = 0; r < kernel.outputs().size(); ++r) {
    if (r < in_place.size() && in_place[r] >= 0) {
      outputs.push_back(inputs[static_cast<size_t>(in_place[r])]);
    } else {
      ACCY_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(kernel.outputs()[r]->type()));
      outputs.push_back(out);
    }
    buffers.push_back(outputs.back().data());
    bytes.push_back(outputs.back().byte_size());
  }
  ACCY_RETURN_IF_ERROR(
      kernel.Run(buffers.data(), bytes.data(), static_cast<int64_t>(buffers.size())));
  return outputs;
}

// A module with one function `main(params) -> result` holding one kernel_call of `target` v1
// with `attrs` (besides call_target_name/version/effects/aliases).
struct KernelCallModule {
  std::unique_ptr<Module> module;
  const Operation* call = nullptr;
};

inline StatusOr<KernelCallModule> MakeKernelCall(std::string_view target,
                                                 std::vector<TensorType> params,
                                                 TensorType result,
                                                 std::vector<NamedAttribute> attrs = {},
                                                 std::vector<std::string> effects = {},
                                                 int64_t alias = -1) {
  Builder builder("kernels_test");
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder fb, builder.BeginFunction("main", params, {result}));
  std::vector<Value*> operands;
  for (size_t i = 0; i < params.size(); ++i) operands.push_back(fb.Parameter(static_cast<int64_t>(i)));
  if (effects.empty()) effects.assign(params.size(), "read");
  attrs.insert(attrs.begin(), {{"call_target_name", std::string(target)},
                               {"version", int64_t{1}},
                               {"operand_effects", effects},
                               {"result_aliases", std::vector<int64_t>{alias}}});
  ACCY_ASSIGN_OR_RETURN(Operation * call,
                        fb.CreateOp(OpKind::kKernelCall, operands, {result}, std::move(attrs)));
  ACCY_RETURN_IF_ERROR(fb.Return({call->result(0)}));
  KernelCallModule out;
  ACCY_ASSIGN_OR_RETURN(out.module, builder.Finish());
  out.call = call;
  return out;
}

// Expects `actual` close to `expected` (|a - e| <= atol + rtol |e|), printing the first bad index.
inline void ExpectClose(const Tensor& actual, const Tensor& expected, double atol, double rtol) {
  TensorComparison c = CompareClose(actual, expected, atol, rtol);
  EXPECT_TRUE(c.ok) << c.message;
}

}  // namespace accy::kernels_test

#endif  // ACCY_TESTS_KERNELS_KERNELS_TEST_UTIL_H_
