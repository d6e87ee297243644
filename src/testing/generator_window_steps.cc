// The generator's window steps (generator_internal.h StepReduceWindow, StepSelectAndScatter):
// random valid reduce_window (named reducers; window dimensions, strides, base and window
// dilations, padding, negative too) and select_and_scatter (the max-pool gradient: select GE,
// scatter add) over 1-4 dims (spec "reduce_window", "select_and_scatter"), so the differential
// runner checks the JIT's window kernels against the reference evaluator.
#include <cmath>
#include <string>
#include <vector>

#include "src/ir/window_geometry.h"
#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {
namespace {

// Window attributes for `dims`: small windows, strides 1-3, dilations (when `dilations`), and
// padding in [-1, 2] per side; false when the padded input of some dim would be negative.
bool RandomWindow(Generator& g, const std::vector<int64_t>& dims, bool dilations,
                  WindowOptions* window, WindowGeometry* geometry) {
  for (int64_t d : dims) {
    window->window_dimensions.push_back(1 + static_cast<int64_t>(g.U(3)));
    window->window_strides.push_back(g.Chance(0.6) ? 1 : 2 + static_cast<int64_t>(g.U(2)));
    window->base_dilations.push_back(dilations && g.Chance(0.15) ? 2 : 1);
    window->window_dilations.push_back(dilations && g.Chance(0.15) ? 2 : 1);
    const int64_t low = g.Chance(0.6) ? 0 : static_cast<int64_t>(g.U(4)) - 1;
    const int64_t high = g.Chance(0.6) ? 0 : static_cast<int64_t>(g.U(4)) - 1;
    window->padding.push_back({low, high});
    geometry->window_dimensions.push_back(window->window_dimensions.back());
    geometry->window_strides.push_back(window->window_strides.back());
    geometry->base_dilations.push_back(window->base_dilations.back());
    geometry->window_dilations.push_back(window->window_dilations.back());
    geometry->padding_low.push_back(low);
    geometry->padding_high.push_back(high);
    if (geometry->PaddedInput(geometry->padding_low.size() - 1, d) < 0) return false;
  }
  return true;
}

}  // namespace

bool Generator::StepReduceWindow() {
  const ElementType e = RandomType(ElementClass::kAny);
  const TensorType type = Type(e, RandomDims(1, 4));
  std::vector<std::string> reducers;
  if (IsBool(e)) {
    reducers = {"and", "or", "max", "min"};
  } else {
    reducers = {"sum", "sum", "max", "max", "min"};
    if (!IsFloat(e)) reducers.push_back("or");
  }
  const std::string reducer = reducers[U(reducers.size())];
  WindowOptions window;
  WindowGeometry geometry;
  if (!RandomWindow(*this, type.dims(), true, &window, &geometry)) return false;
  const std::vector<int64_t> out_dims = geometry.NumWindows(type.dims());
  // Base dilation and padding grow the result; keep it within the generator's element bound.
  double out_count = 1;
  for (int64_t d : out_dims) out_count *= static_cast<double>(d);
  if (out_count > static_cast<double>(options_.max_elements)) return false;
  double n = 1;
  for (int64_t w : window.window_dimensions) n *= static_cast<double>(w);
  const Need need = reducer == "sum" ? Need{true, 1e4, false} : Need{};
  const int x = Pick(type, need);
  // Float sums: the JIT adds in the element type, window position by window position, as the
  // reference does (docs/numerics.md), so only overflow could tell them apart.
  if (IsFloat(e) && reducer == "sum" && V(x).bound * n > MaxFinite(e) / 16) return false;
  const bool max_min = reducer == "max" || reducer == "min";
  FuzzValue v = Derive({x}, Type(e, out_dims), true, max_min ? V(x).bound : V(x).bound * n,
                       V(x).non_finite || (max_min && IsFloat(e)));
  if (!IsFloat(e)) v.non_finite = false;
  AddRecipe("reduce_window", {x}, {v},
            [window, reducer, e](FunctionBuilder& f, std::span<Value* const> xs,
                                 BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * init, f.ConstantScalar(e, Identity(reducer, e)));
              ACCY_ASSIGN_OR_RETURN(Value * r, f.ReduceWindow(xs[0], init, window, reducer));
              return std::vector<Value*>{r};
            });
  return true;
}

bool Generator::StepSelectAndScatter() {
  const ElementType e = RandomType(ElementClass::kNumeric);
  const TensorType type = Type(e, RandomDims(1, 4));
  WindowOptions window;
  WindowGeometry geometry;
  if (!RandomWindow(*this, type.dims(), false, &window, &geometry)) return false;
  window.base_dilations.clear();
  window.window_dilations.clear();
  const std::vector<int64_t> source_dims = geometry.NumWindows(type.dims());
  double overlap = 1;  // windows a result element can be selected by, at most
  for (size_t d = 0; d < source_dims.size(); ++d) {
    overlap *= std::ceil(static_cast<double>(window.window_dimensions[d]) /
                         static_cast<double>(window.window_strides[d]));
  }
  // Ties and NaN order decide which element a window selects: exact operands only, so the JIT
  // and the reference compare the same numbers.
  const int x = Pick(type, kExactOnly);
  const int source = Pick(Type(e, source_dims), Need{true, 1e4, false});
  if (IsFloat(e) && V(source).bound * overlap > MaxFinite(e) / 16) return false;
  FuzzValue v = Derive({x, source}, type, true, V(source).bound * overlap,
                       V(source).non_finite || V(x).non_finite);
  if (!IsFloat(e)) v.non_finite = false;
  AddRecipe("select_and_scatter", {x, source}, {v},
            [window, e](FunctionBuilder& f, std::span<Value* const> xs,
                        BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * init, f.ConstantScalar(e, 0));
              RegionBodyFn select = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
                ACCY_ASSIGN_OR_RETURN(Value * ge, b.Compare(a[0], a[1], "GE"));
                return b.Return({ge});
              };
              RegionBodyFn scatter = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
                ACCY_ASSIGN_OR_RETURN(Value * sum, b.Add(a[0], a[1]));
                return b.Return({sum});
              };
              ACCY_ASSIGN_OR_RETURN(Value * r, f.SelectAndScatter(xs[0], xs[1], init, window,
                                                                  std::move(select),
                                                                  std::move(scatter)));
              return std::vector<Value*>{r};
            });
  return true;
}

}  // namespace accy::fuzz::internal
