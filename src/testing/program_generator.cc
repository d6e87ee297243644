// The generator's values (program_generator.h, generator_internal.h): random types and shapes,
// parameters, constants and the choice of operands, the recipes they are added as, and the
// program a run of steps makes. The op helpers are in generator_op_helpers.cc, the elementwise
// steps in generator_elementwise_steps.cc, the other steps in the generator_*_step(s).cc files.
#include "src/testing/program_generator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <utility>

#include "src/testing/generator_internal.h"

namespace accy::fuzz {

double ApproximateTolerance(ElementType type) {
  switch (type) {
    case ElementType::kF64: return 1e-9;
    case ElementType::kF32: return 2e-4;
    case ElementType::kF16: return 2e-2;
    case ElementType::kBF16: return 5e-2;
    default: return 0;
  }
}

uint64_t ProgramSeed(uint64_t run_seed, int64_t index) {
  uint64_t z = run_seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(index) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

FuzzProgram GenerateProgram(uint64_t seed, const GeneratorOptions& options) {
  return internal::Generator(seed, options).Run();
}

namespace internal {

double MaxFinite(ElementType type) {
  switch (type) {
    case ElementType::kF16: return 65504.0;
    case ElementType::kBF16: return 3.3895313892515355e38;
    case ElementType::kF32: return 3.4028234663852886e38;
    case ElementType::kF64: return 1.7976931348623157e308;
    case ElementType::kI1: return 1;
    default:
      return IsSigned(type) ? std::ldexp(1.0, ElementBitWidth(type) - 1) - 1
                            : std::ldexp(1.0, ElementBitWidth(type)) - 1;
  }
}

Generator::Generator(uint64_t seed, const GeneratorOptions& options)
    : rng_(seed ^ 0x5DEECE66Dull), options_(options) {
  program_.seed = seed;
}

TensorType Generator::Type(ElementType e, std::vector<int64_t> dims) const {
  return *TensorType::Create(e, std::move(dims));
}

ElementType Generator::RandomFloatType() {
  static constexpr ElementType kFloats[] = {ElementType::kF32, ElementType::kF32, ElementType::kF32,
                                            ElementType::kF64, ElementType::kF16, ElementType::kBF16};
  return kFloats[U(std::size(kFloats))];
}

ElementType Generator::RandomType(ElementClass classes) {
  // f32 is what models use most: it gets a third of the draws when allowed.
  if (ElementClassContains(classes, ElementType::kF32) && Chance(0.33)) return ElementType::kF32;
  std::vector<ElementType> allowed;
  for (ElementType e : kAllElementTypes) {
    if (ElementClassContains(classes, e)) allowed.push_back(e);
  }
  return allowed[U(allowed.size())];
}

int64_t Generator::RandomSize(bool allow_zero) {
  static constexpr int64_t kSizes[] = {1, 1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 33, 64, 100, 128, 257, 1023};
  if (allow_zero && Chance(0.03)) return 0;
  return kSizes[U(std::size(kSizes))];
}

std::vector<int64_t> Generator::RandomDims(int min_rank, int max_rank) {
  if (!base_shapes_.empty() && Chance(0.6)) {
    const auto& base = base_shapes_[U(base_shapes_.size())];
    if (static_cast<int>(base.size()) >= min_rank && static_cast<int>(base.size()) <= max_rank) {
      return base;
    }
  }
  static constexpr int kRanks[] = {0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4};
  int rank = kRanks[U(std::size(kRanks))];
  rank = std::clamp(rank, min_rank, max_rank);
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) dims.push_back(RandomSize());
  // Keep the element count bounded: shrink the largest dim until it fits.
  auto count = [&] {
    double c = 1;
    for (int64_t d : dims) c *= static_cast<double>(d);
    return c;
  };
  while (count() > static_cast<double>(options_.max_elements)) {
    auto largest = std::max_element(dims.begin(), dims.end());
    *largest = std::max<int64_t>(1, *largest / 3);
  }
  if (base_shapes_.size() < 3) base_shapes_.push_back(dims);
  return dims;
}

int Generator::AddRecipe(std::string label, std::vector<int> operands,
                         std::vector<FuzzValue> results, OpBuildFn build) {
  FuzzOp op;
  op.label = std::move(label);
  op.operands = std::move(operands);
  op.build = std::move(build);
  const int producer = static_cast<int>(program_.ops.size());
  for (FuzzValue& v : results) {
    v.producer = producer;
    op.results.push_back(static_cast<int>(program_.values.size()));
    program_.values.push_back(std::move(v));
  }
  program_.ops.push_back(std::move(op));
  return program_.ops.back().results.front();
}

FuzzValue Generator::Derive(const std::vector<int>& operands, const TensorType& result,
                            bool exact_op, double bound, bool non_finite) const {
  FuzzValue v;
  v.type = result;
  v.exact = exact_op;
  double tolerance = 0;
  for (int id : operands) {
    v.exact = v.exact && V(id).exact;
    tolerance = std::max(tolerance, V(id).tolerance);
  }
  if (!v.exact) tolerance = std::max(tolerance, ApproximateTolerance(result.element_type()));
  v.tolerance = v.exact ? 0 : tolerance;
  v.bound = std::isnan(bound) ? kInf : bound;
  v.non_finite = non_finite || (IsFloat(result.element_type()) &&
                                v.bound > MaxFinite(result.element_type()));
  return v;
}

int Generator::AddOp(std::string label, OpKind kind, std::vector<int> operands,
                     const TensorType& result, std::vector<NamedAttribute> attributes, bool exact,
                     double bound, bool non_finite, double extra_tolerance) {
  FuzzValue v = Derive(operands, result, exact, bound, non_finite);
  if (!v.exact) v.tolerance = std::max(v.tolerance, extra_tolerance);
  OpBuildFn build = [kind, result, attributes](FunctionBuilder& f, std::span<Value* const> xs,
                                               BuildForm) -> StatusOr<std::vector<Value*>> {
    ACCY_ASSIGN_OR_RETURN(Operation * op,
                          f.CreateOp(kind, std::vector<Value*>(xs.begin(), xs.end()), {result},
                                     attributes));
    return std::vector<Value*>{op->result(0)};
  };
  return AddRecipe(std::move(label), std::move(operands), {std::move(v)}, std::move(build));
}

int Generator::Param(const TensorType& type, InputKind kind, int64_t index_limit) {
  Tensor t = *Tensor::Allocate(type);
  const ElementType e = type.element_type();
  const int64_t n = type.element_count();
  FuzzValue v;
  v.type = type;
  v.bound = 4;
  static constexpr double kSpecials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-40, -3e-39,
                                         6e-8, 65504.0, 1e-310, 1.0, -1.0, 0.5, 2.5, -7.0};
  for (int64_t i = 0; i < n; ++i) {
    switch (kind) {
      case InputKind::kTame:
        t.SetFromDouble(i, std::uniform_real_distribution<double>(-4, 4)(rng_));
        break;
      case InputKind::kWild:
        t.SetFromDouble(i, Chance(0.3) ? kSpecials[U(std::size(kSpecials))]
                                       : std::uniform_real_distribution<double>(-100, 100)(rng_));
        break;
      case InputKind::kPositive:
        t.SetFromDouble(i, std::uniform_real_distribution<double>(0.125, 8)(rng_));
        break;
      case InputKind::kAnyInteger: {
        const int bits = ElementBitWidth(e);
        uint64_t bitsv = rng_();
        const uint64_t r = U(4);
        if (r == 0) bitsv = static_cast<uint64_t>(static_cast<int64_t>(U(2 * bits + 5)) - (bits + 2));
        if (r == 1) {
          const uint64_t min = uint64_t{1} << (bits - 1);
          const uint64_t specials[] = {0, 1, ~uint64_t{0}, min, min - 1};
          bitsv = specials[U(5)];
        }
        std::memcpy(static_cast<uint8_t*>(t.data()) + i * ElementByteWidth(e), &bitsv,
                    static_cast<size_t>(ElementByteWidth(e)));
        break;
      }
      case InputKind::kSmallInteger:
        t.SetFromDouble(i, IsSigned(e) ? static_cast<double>(U(17)) - 8 : static_cast<double>(U(17)));
        break;
      case InputKind::kIndex:
        t.SetFromDouble(i, static_cast<double>(U(static_cast<uint64_t>(index_limit) + 5)) - 2);
        break;
      case InputKind::kBool:
        t.SetFromDouble(i, static_cast<double>(U(2)));
        break;
    }
  }
  switch (kind) {
    case InputKind::kTame: v.bound = 4; break;
    case InputKind::kWild: v.bound = 65504; v.non_finite = true; break;
    case InputKind::kPositive: v.bound = 8; break;
    case InputKind::kAnyInteger: v.bound = MaxFinite(e) + 1; break;
    case InputKind::kSmallInteger: v.bound = 16; break;
    case InputKind::kIndex: v.bound = IsUnsigned(e) ? MaxFinite(e) : static_cast<double>(index_limit + 2); break;
    case InputKind::kBool: v.bound = 1; break;
  }
  if (!IsFloat(e)) v.non_finite = false;
  const int id = static_cast<int>(program_.values.size());
  program_.values.push_back(v);
  program_.parameters.push_back(id);
  program_.inputs.push_back(std::move(t));
  return id;
}

bool Fits(const FuzzValue& v, const TensorType& type, const Need& need) {
  if (v.type != type) return false;
  if (!v.exact && (!need.allow_approx || v.bound > need.approx_max_bound)) return false;
  return !(need.finite && v.non_finite);
}

int Generator::Existing(ElementClass classes, const Need& need, int min_rank) {
  std::vector<int> candidates;
  for (size_t i = 0; i < program_.values.size(); ++i) {
    const FuzzValue& v = program_.values[i];
    if (!ElementClassContains(classes, v.type.element_type()) || v.type.rank() < min_rank) continue;
    if (Fits(v, v.type, need)) candidates.push_back(static_cast<int>(i));
  }
  if (candidates.empty()) return -1;
  return Chance(0.4) ? candidates.back() : candidates[U(candidates.size())];
}

int Generator::Splat(const TensorType& type, double value) {
  FuzzValue v;
  v.type = type;
  v.bound = std::fabs(value);
  v.non_finite = !std::isfinite(value);
  OpBuildFn build = [type, value](FunctionBuilder& f, std::span<Value* const>,
                                  BuildForm) -> StatusOr<std::vector<Value*>> {
    ACCY_ASSIGN_OR_RETURN(Value * scalar, f.ConstantScalar(type.element_type(), value));
    if (type.rank() == 0) return std::vector<Value*>{scalar};
    ACCY_ASSIGN_OR_RETURN(Value * splat, f.BroadcastInDim(scalar, type, {}));
    return std::vector<Value*>{splat};
  };
  return AddRecipe("constant", {}, {v}, std::move(build));
}

int Generator::Pick(const TensorType& type, const Need& need, int depth) {
  std::vector<int> candidates;
  for (size_t i = 0; i < program_.values.size(); ++i) {
    if (Fits(program_.values[i], type, need)) candidates.push_back(static_cast<int>(i));
  }
  if (!candidates.empty() && Chance(0.7)) {
    return Chance(0.5) ? candidates.back() : candidates[U(candidates.size())];
  }
  const ElementType e = type.element_type();
  if (depth < 2) {
    const uint64_t r = U(10);
    if (r < 3) {  // convert a value of the same dims
      std::vector<int> sources;
      for (size_t i = 0; i < program_.values.size(); ++i) {
        const FuzzValue& v = program_.values[i];
        if (v.type.dims() != type.dims() || v.type.element_type() == e) continue;
        if (!v.exact && (!need.allow_approx || !IsFloat(e) || v.bound > need.approx_max_bound ||
                         v.bound > MaxFinite(e) / 4)) {
          continue;
        }
        if (need.finite && v.non_finite && IsFloat(e)) continue;
        sources.push_back(static_cast<int>(i));
      }
      if (!sources.empty()) return ConvertTo(sources[U(sources.size())], e);
    } else if (r < 5 && type.rank() > 0) {  // broadcast a lower-rank value
      std::vector<int64_t> sub, positions;
      for (int64_t d = 0; d < type.rank(); ++d) {
        if (Chance(0.5)) {
          sub.push_back(Chance(0.2) ? 1 : type.dim(d));
          positions.push_back(d);
        }
      }
      const int source = Pick(Type(e, sub), need, depth + 1);
      return Broadcast(source, type.dims(), positions);
    } else if (r < 6) {
      const double value = IsBool(e) ? static_cast<double>(U(2))
                           : IsUnsigned(e) ? static_cast<double>(U(9))
                                           : static_cast<double>(U(17)) / 4 - 2;
      return Splat(type, value);
    }
  }
  InputKind kind = InputKind::kTame;
  if (IsBool(e)) {
    kind = InputKind::kBool;
  } else if (!IsFloat(e)) {
    kind = Chance(0.4) ? InputKind::kAnyInteger : InputKind::kSmallInteger;
  } else if (!need.finite && need.approx_max_bound == kInf && Chance(0.25)) {
    kind = InputKind::kWild;
  }
  return Param(type, kind);
}

// ---- The program ------------------------------------------------------------------------------

FuzzProgram Generator::Run() {
  using Step = bool (Generator::*)();
  struct WeightedStep {
    int weight;
    std::function<bool(Generator&)> run;
  };
  const std::vector<WeightedStep> steps = {
      {14, [](Generator& g) { return g.StepUnary(); }},
      {16, [](Generator& g) { return g.StepBinary(); }},
      {5, [](Generator& g) { return g.StepCompareSelect(); }},
      {2, [](Generator& g) { return g.StepClamp(); }},
      {4, [](Generator& g) { return g.StepConvert(); }},
      {2, [](Generator& g) { return g.StepBitcast(); }},
      {3, [](Generator& g) { return g.StepBroadcast(); }},
      {3, [](Generator& g) { return g.StepReshape(); }},
      {3, [](Generator& g) { return g.StepTranspose(); }},
      {3, [](Generator& g) { return g.StepSlice(); }},
      {2, [](Generator& g) { return g.StepPad(); }},
      {2, [](Generator& g) { return g.StepConcatenate(); }},
      {1, [](Generator& g) { return g.StepIota(); }},
      {2, [](Generator& g) { return g.StepReverse(); }},
      {2, [](Generator& g) { return g.StepGather(); }},
      {2, [](Generator& g) { return g.StepScatter(); }},
      {2, [](Generator& g) { return g.StepDynamicSlice(false); }},
      {2, [](Generator& g) { return g.StepDynamicSlice(true); }},
      {4, [](Generator& g) { return g.StepDotGeneral(); }},
      {2, [](Generator& g) { return g.StepConvolution(); }},
      {1, [](Generator& g) { return g.StepTriangularSolve(); }},
      {1, [](Generator& g) { return g.StepRngBitGenerator(); }},
      {1, [](Generator& g) { return g.StepLapack(); }},
      {1, [](Generator& g) { return g.StepCollective(); }},
      {1, [](Generator& g) { return g.StepBatchNorm(); }},
      {5, [](Generator& g) { return g.StepReduce(); }},
      {1, [](Generator& g) { return g.StepArgmax(); }},
      {2, [](Generator& g) { return g.StepReduceBody(); }},
      {2, [](Generator& g) { return g.StepCumsum(); }},
      {2, [](Generator& g) { return g.StepReduceWindow(); }},
      {1, [](Generator& g) { return g.StepSelectAndScatter(); }},
      {2, [](Generator& g) { return g.StepSort(); }},
      {1, [](Generator& g) { return g.StepTopK(); }},
      {options_.while_loops ? 2 : 0, [](Generator& g) { return g.StepWhile(); }},
      {options_.while_loops ? 1 : 0, [](Generator& g) { return g.StepCase(); }},
      {options_.kernel_calls ? 3 : 0, [](Generator& g) { return g.StepKernelCall(); }},
      {options_.kernel_calls ? 2 : 0, [](Generator& g) { return g.StepWindowKernel(); }},
      {3, [](Generator& g) { return g.PatternChain(); }},
      {2, [](Generator& g) { return g.PatternSoftmax(); }},
      {2, [](Generator& g) { return g.PatternLayerNorm(); }},
      {2, [](Generator& g) { return g.PatternMatmulEpilogue(); }},
      {1, [](Generator& g) { return g.PatternAttention(); }},
  };
  (void)sizeof(Step);
  int total = 0;
  for (const auto& s : steps) total += s.weight;
  const int count = 1 + static_cast<int>(U(static_cast<uint64_t>(std::max(1, options_.max_steps))));
  for (int i = 0; i < count || program_.ops.empty(); ++i) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      int r = static_cast<int>(U(static_cast<uint64_t>(total)));
      size_t s = 0;
      while (r >= steps[s].weight) r -= steps[s++].weight;
      if (steps[s].run(*this)) break;
    }
  }
  // Outputs: the last op's results, the near misses' escaping intermediates, up to five other
  // results no op reads (so that few ops are dead code) and now and then any other result.
  std::vector<int> outputs = program_.ops.back().results;
  for (int id : extra_outputs_) outputs.push_back(id);
  std::vector<bool> used(program_.values.size(), false);
  for (const FuzzOp& op : program_.ops) {
    for (int id : op.operands) used[static_cast<size_t>(id)] = true;
  }
  std::vector<int> sinks;
  for (const FuzzOp& op : program_.ops) {
    for (int id : op.results) {
      if (!used[static_cast<size_t>(id)]) sinks.push_back(id);
    }
  }
  std::shuffle(sinks.begin(), sinks.end(), rng_);
  for (size_t i = 0; i < sinks.size() && i < 5; ++i) outputs.push_back(sinks[i]);
  if (Chance(0.3)) {
    const FuzzOp& op = program_.ops[U(program_.ops.size())];
    outputs.push_back(op.results[U(op.results.size())]);
  }
  for (int id : outputs) {
    if (std::find(program_.outputs.begin(), program_.outputs.end(), id) == program_.outputs.end()) {
      program_.outputs.push_back(id);
    }
  }
  return std::move(program_);
}

}  // namespace internal
}  // namespace accy::fuzz
