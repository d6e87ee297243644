// Test helpers for the JIT: plan a function (WorkLedger + AnalysisCache), compile it with
// CompiledProgram, and run its items in plan order over host tensors -- a minimal stand-in for
// the executor (parameters bound to arguments, constants materialized from their attributes,
// one fresh tensor per item output, one fresh scratch buffer per two-phase item). Header-only,
// for tests/jit only; not thread-safe.
#ifndef ACCY_TESTS_JIT_JIT_TEST_UTIL_H_
#define ACCY_TESTS_JIT_JIT_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/tensor.h"
#include "jit/compiled_program.h"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"
#include "tests/test_util.h"

namespace accy::jit::testing {

// The text of each module the JIT dumped into `dir` before optimization (the NAME.before.ll
// files JitCompilerOptions::dump_dir writes), in directory order.
inline std::vector<std::string> DumpedModulesBeforeOptimization(const std::filesystem::path& dir) {
  std::vector<std::string> modules;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.path().filename().string().ends_with(".before.ll")) continue;
    std::ifstream in(entry.path());
    modules.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return modules;
}

// How many times `needle` (not empty) occurs in `text`, overlaps included.
inline size_t CountOccurrences(std::string_view text, std::string_view needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// The IEEE-754 bits of `x`, for bit-for-bit comparisons.
inline uint32_t Bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
inline uint64_t Bits(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

class JitProgram {
 public:
  // Plans and compiles `function_name` of `module`. Errors: planning or compile errors.
  static StatusOr<std::unique_ptr<JitProgram>> Create(std::unique_ptr<Module> module,
                                                      const std::string& function_name = "main",
                                                      const JitCompilerOptions& options = {}) {
    std::unique_ptr<JitProgram> program(new JitProgram(std::move(module)));
    program->function_ = program->module_->FindFunction(function_name);
    if (program->function_ == nullptr) return absl::NotFoundError("no function " + function_name);
    ACCY_ASSIGN_OR_RETURN(program->plan_, program->cache_.Get<SchedulePlan>(*program->function_));
    ACCY_ASSIGN_OR_RETURN(const FusionPlanAnalysis* fusion,
                          program->cache_.Get<FusionPlanAnalysis>(*program->function_));
    ACCY_ASSIGN_OR_RETURN(program->compiled_,
                          CompiledProgram::Compile(*program->function_, *program->plan_,
                                                   fusion->plan(), options));
    return program;
  }

  // Runs every item in order on `arguments` with `threads` threads (0 = OMP default) and
  // returns the function's results.
  StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> arguments, int threads = 1) const {
    std::map<const Value*, Tensor> values;
    for (size_t i = 0; i < arguments.size(); ++i) values[function_->parameter(static_cast<int64_t>(i))] = arguments[i];
    auto get = [&](const Value* value) -> StatusOr<Tensor> {
      auto it = values.find(value);
      if (it != values.end()) return it->second;
      const Operation* def = value->defining_op();
      if (def != nullptr && def->kind() == OpKind::kConstant) {
        ACCY_ASSIGN_OR_RETURN(Tensor t, Tensor::FromBytes(value->type(), def->GetDense("value")->bytes));
        values[value] = t;
        return t;
      }
      return absl::InternalError("value not computed yet");
    };
    RunOptions options;
    options.num_threads = threads;
    for (size_t i = 0; i < compiled_->items().size(); ++i) {
      const CompiledItem& item = compiled_->items()[i];
      std::vector<void*> buffers;
      std::vector<int64_t> bytes;
      for (const Value* input : item.inputs) {
        ACCY_ASSIGN_OR_RETURN(Tensor t, get(input));
        buffers.push_back(t.data());
        bytes.push_back(t.byte_size());
      }
      for (const Value* output : item.outputs) {
        ACCY_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(output->type()));
        values[output] = t;
        buffers.push_back(t.data());
        bytes.push_back(t.byte_size());
      }
      // A two-phase kernel's scratch buffer (kernel_abi.h), fresh for each run.
      std::vector<uint8_t> scratch(static_cast<size_t>(item.scratch_bytes));
      if (item.scratch_bytes > 0) {
        buffers.push_back(scratch.data());
        bytes.push_back(item.scratch_bytes);
      }
      ACCY_RETURN_IF_ERROR(compiled_->RunItem(i, buffers.data(), bytes.data(), buffers.size(), options));
    }
    std::vector<Tensor> results;
    for (const Value* value : function_->entry_block()->terminator()->operands()) {
      ACCY_ASSIGN_OR_RETURN(Tensor t, get(value));
      results.push_back(t);
    }
    return results;
  }

  const Module& module() const { return *module_; }
  const SchedulePlan& plan() const { return *plan_; }
  const CompiledProgram& compiled() const { return *compiled_; }

 private:
  explicit JitProgram(std::unique_ptr<Module> module)
      : module_(std::move(module)), ledger_(), cache_(&ledger_) {}

  std::unique_ptr<Module> module_;
  passes::WorkLedger ledger_;
  passes::AnalysisCache cache_;
  const Function* function_ = nullptr;
  const SchedulePlan* plan_ = nullptr;
  std::unique_ptr<CompiledProgram> compiled_;
};

// Runs the one-operand op `kind` (e.g. OpKind::kTan) over `inputs` as a rank-1 f32 (T = float)
// or f64 (T = double) tensor through the JIT at 2 threads; the outputs in input order. A build,
// compile or run error fails the test (StatusOr::value() aborts; these programs are valid).
template <typename T>
std::vector<T> RunUnaryOp(OpKind kind, const std::vector<T>& inputs) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  Builder builder("unary_op_test");
  TensorType t = builder.Type(std::is_same_v<T, float> ? ElementType::kF32 : ElementType::kF64,
                              {static_cast<int64_t>(inputs.size())}).value();
  auto f = builder.BeginFunction("main", {t}, {t}).value();
  Operation* op = f.CreateOp(kind, {f.Parameter(0)}, {t}, {}).value();
  EXPECT_OK(f.Return({op->result(0)}));
  auto program = JitProgram::Create(builder.Finish().value()).value();
  Tensor x = Tensor::Allocate(t).value();
  std::memcpy(x.data(), inputs.data(), inputs.size() * sizeof(T));
  const std::vector<Tensor> args = {x};
  std::vector<Tensor> results = program->Run(args, /*threads=*/2).value();
  std::vector<T> out(inputs.size());
  std::memcpy(out.data(), results[0].data(), out.size() * sizeof(T));
  return out;
}

}  // namespace accy::jit::testing

#endif  // ACCY_TESTS_JIT_JIT_TEST_UTIL_H_
