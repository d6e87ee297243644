// accy::fuzz::FuzzProgram: a generated test program as a list of op recipes over numbered values,
// the form the differential fuzzer generates, runs and reduces (docs/fuzzing.md).
//
// Values 0.. are the program's parameters and op results in creation order; each op recipe
// names its operand values and builds its StableHLO op(s) through the builder (accy/builder.h).
// BuildModule turns the recipes into a verified module with one function "main". A program owns
// its input tensors (one per parameter). Not part of the engine's public API: tests and
// `accy fuzz` only. Programs are plain values; functions here are thread-safe.
#ifndef ACCY_SRC_TESTING_FUZZ_PROGRAM_H_
#define ACCY_SRC_TESTING_FUZZ_PROGRAM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"

namespace accy::fuzz {

// Which module a recipe builds: the engine's (kernel_calls as they are) or the reference
// evaluator's, where each kernel_call is replaced by the StableHLO ops of its contract
// (kernels/kernel_contracts.h), since the reference evaluator runs no library kernel.
enum class BuildForm : uint8_t { kEngine, kReference };

// Builds one op recipe in `f` from its operands; returns one value per result type.
using OpBuildFn = std::function<StatusOr<std::vector<Value*>>(
    FunctionBuilder& f, std::span<Value* const> operands, BuildForm form)>;

// What the comparison may assume about one value (docs/fuzzing.md, "Tolerances").
struct FuzzValue {
  TensorType type;
  // -1 for a parameter, else the index of the op (in FuzzProgram::ops) that produces it.
  int producer = -1;
  // Bit for bit: every op on its path is exact on both sides (integers, exact float ops).
  // Otherwise `tolerance` is the relative bound (of max(1, max |reference|)) it is compared with.
  bool exact = true;
  double tolerance = 0;
  // Upper bound of |x| over its finite elements (floats; +inf when unknown), and whether
  // NaN/inf may occur. The generator keeps approximate values away from overflow with them.
  double bound = 0;
  bool non_finite = false;
};

// One op recipe.
struct FuzzOp {
  std::string label;            // coverage name: "add", "softmax_row", "kernel_call:accy.nn.softmax"
  std::vector<int> operands;    // value ids
  std::vector<int> results;     // value ids of its results, one per result type
  OpBuildFn build;
};

struct FuzzProgram {
  uint64_t seed = 0;                  // the generator seed that made it
  std::vector<FuzzValue> values;
  std::vector<int> parameters;        // value ids, in function parameter order
  std::vector<Tensor> inputs;         // one per parameter
  std::vector<FuzzOp> ops;            // in program order
  std::vector<int> outputs;           // value ids returned by main, in order
};

// The verified module of `program` (function "main": parameters, then every op recipe in order,
// returning `outputs`). Errors: a recipe's builder error (a generator bug), naming the recipe.
StatusOr<std::unique_ptr<Module>> BuildModule(const FuzzProgram& program,
                                              BuildForm form = BuildForm::kEngine);

// Ops (including those nested in regions) of `module`'s functions by kind, and element types of
// every op result: the coverage `accy fuzz` reports.
struct OpCoverage {
  std::vector<int64_t> ops_by_kind = std::vector<int64_t>(kNumOpKinds, 0);
  std::vector<int64_t> values_by_element_type = std::vector<int64_t>(std::size(kAllElementTypes), 0);
  void Add(const Module& module);
  void Merge(const OpCoverage& other);
};

}  // namespace accy::fuzz

#endif  // ACCY_SRC_TESTING_FUZZ_PROGRAM_H_
