// The generator's state and op helpers, shared by program_generator.cc (values, the step table),
// generator_op_helpers.cc, generator_elementwise_steps.cc, generator_shape_steps.cc,
// generator_steps.cc (contractions, reductions, loops, fusion patterns) and
// generator_kernel_steps.cc (kernel_calls). Internal to src/testing.
#ifndef ACCY_SRC_TESTING_GENERATOR_INTERNAL_H_
#define ACCY_SRC_TESTING_GENERATOR_INTERNAL_H_

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "src/testing/program_generator.h"

namespace accy::fuzz::internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// What an operand may be (Generator::Pick).
struct Need {
  bool allow_approx = true;          // false: exact values only (ill-conditioned ops)
  double approx_max_bound = kInf;    // approximate values must be bounded by this
  bool finite = false;               // no NaN/inf possible (bitcast of floats, kernel calls)
};
inline constexpr Need kExactOnly{false, kInf, false};

// Whether `v` may stand for an operand of `type` under `need` (program_generator.cc).
bool Fits(const FuzzValue& v, const TensorType& type, const Need& need);

// How a new parameter's input is drawn.
enum class InputKind : uint8_t { kTame, kWild, kPositive, kAnyInteger, kSmallInteger, kIndex, kBool };

class Generator {
 public:
  Generator(uint64_t seed, const GeneratorOptions& options);
  FuzzProgram Run();

  // Random helpers.
  uint64_t U(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  ElementType RandomType(ElementClass classes);
  ElementType RandomFloatType();
  std::vector<int64_t> RandomDims(int min_rank = 0, int max_rank = 4);
  int64_t RandomSize(bool allow_zero = true);
  TensorType Type(ElementType e, std::vector<int64_t> dims) const;
  const FuzzValue& V(int id) const { return program_.values[static_cast<size_t>(id)]; }

  // Values.
  int Param(const TensorType& type, InputKind kind, int64_t index_limit = 0);
  int Pick(const TensorType& type, const Need& need = {}, int depth = 0);
  int PickScalar(ElementType e, const Need& need = {}) { return Pick(Type(e, {}), need); }
  // An existing value of `classes` satisfying `need`, or -1.
  int Existing(ElementClass classes, const Need& need, int min_rank = 0);
  // A constant of `type` with every element `value` (one recipe: constant + broadcast_in_dim).
  int Splat(const TensorType& type, double value);

  // Adds a one-op recipe built with FunctionBuilder::CreateOp and a result of the given facts;
  // returns the result's value id.
  int AddOp(std::string label, OpKind kind, std::vector<int> operands, const TensorType& result,
            std::vector<NamedAttribute> attributes, bool exact, double bound, bool non_finite,
            double extra_tolerance = 0);
  // Adds a recipe with its own build function and result facts.
  int AddRecipe(std::string label, std::vector<int> operands, std::vector<FuzzValue> results,
                OpBuildFn build);
  // Facts of an op result from its operands: exact when they all are and the op is.
  FuzzValue Derive(const std::vector<int>& operands, const TensorType& result, bool exact_op,
                   double bound, bool non_finite) const;

  // Op helpers (explicit operands; used by the random steps and the patterns):
  // generator_op_helpers.cc, ReduceNamed and Dot generator_steps.cc.
  int Unary(OpKind kind, int x);
  int Binary(OpKind kind, int a, int b);
  int Compare(int a, int b, const std::string& direction, const std::string& compare_type = "");
  int Broadcast(int x, std::vector<int64_t> dims, std::vector<int64_t> broadcast_dimensions);
  int ReduceNamed(int x, const std::string& reducer, std::vector<int64_t> dimensions);
  int Dot(int lhs, int rhs, std::vector<int64_t> lc, std::vector<int64_t> rc,
          std::vector<int64_t> lb, std::vector<int64_t> rb);
  int ConvertTo(int x, ElementType to);

  // Random steps: true when a step was added. Elementwise in generator_elementwise_steps.cc,
  // shape and data movement in generator_shape_steps.cc.
  bool StepUnary(int forced = -1);
  bool StepBinary(int forced = -1);
  bool StepCompareSelect();
  bool StepClamp();
  bool StepConvert();
  bool StepBitcast();
  bool StepBroadcast();
  bool StepReshape();
  bool StepTranspose();
  bool StepSlice();
  bool StepPad();
  bool StepConcatenate();
  bool StepIota();
  bool StepReverse();
  bool StepReduceWindow();
  bool StepSelectAndScatter();
  bool StepSort();  // generator_sort_steps.cc
  bool StepTopK();
  bool StepGather();
  bool StepScatter();
  bool StepDynamicSlice(bool update);
  // generator_steps.cc
  bool StepDotGeneral();
  bool StepConvolution();  // generator_convolution_step.cc
  bool StepTriangularSolve();  // generator_triangular_solve_step.cc
  bool StepRngBitGenerator();  // generator_rng_bit_generator_step.cc
  bool StepLapack();           // generator_lapack_step.cc
  bool StepCollective();       // generator_collective_step.cc
  bool StepBatchNorm();        // generator_batch_norm_step.cc
  bool StepReduce();
  bool StepArgmax();
  bool StepReduceBody();
  bool StepCumsum();
  bool StepWhile();
  bool StepCase();
  bool StepKernelCall();
  bool StepWindowKernel();
  bool PatternChain();
  bool PatternSoftmax(int x = -1, int axis = -1, bool near_miss = false);
  bool PatternLayerNorm();
  bool PatternMatmulEpilogue();
  bool PatternAttention();

  const GeneratorOptions& options() const { return options_; }
  int LastValue() const { return static_cast<int>(program_.values.size()) - 1; }
  std::vector<int>& extra_outputs() { return extra_outputs_; }

 private:
  std::mt19937_64 rng_;
  GeneratorOptions options_;
  FuzzProgram program_;
  std::vector<std::vector<int64_t>> base_shapes_;
  std::vector<int> extra_outputs_;  // intermediates a near-miss pattern makes escape
};

// Largest finite value of a float type; integer types: their largest value as a double.
double MaxFinite(ElementType type);

// Builder helpers shared by the steps (generator_steps.cc unless noted).
// The identity of a named reducer ("sum", "prod", "max", "min", "and", "or") on `e` (spec
// "reduce": init_values should be the body's identity).
double Identity(const std::string& reducer, ElementType e);
// `dims` without the positions in `drop`; 0..rank-1 without `axis`.
std::vector<int64_t> Without(const std::vector<int64_t>& dims, const std::vector<int64_t>& drop);
std::vector<int64_t> AllBut(int64_t rank, int64_t axis);
// reduce of `x` over `dims` with a named reducer and its identity as the init value.
StatusOr<Value*> ReduceF(FunctionBuilder& f, Value* x, const std::string& reducer,
                         std::vector<int64_t> dims);
// A constant of `type` with every element `value` (constant + broadcast_in_dim).
StatusOr<Value*> SplatConstant(FunctionBuilder& f, const TensorType& type, double value);
// select(i == j, |x| + 1, x * off_diagonal_scale) over x's last two dims (rank >= 2): the
// diagonally dominant matrices of the triangular_solve and lapack steps
// (generator_triangular_solve_step.cc).
StatusOr<Value*> DiagonallyDominant(FunctionBuilder& f, Value* x, double off_diagonal_scale);
// accy.nn.softmax / log_softmax along `axis` as StableHLO ops in f32, rounded once to x's type
// (generator_kernel_steps.cc).
StatusOr<Value*> SoftmaxReference(FunctionBuilder& f, Value* x, int64_t axis, bool log);

}  // namespace accy::fuzz::internal

#endif  // ACCY_SRC_TESTING_GENERATOR_INTERNAL_H_
