// Window attributes of reduce_window and select_and_scatter (window_geometry.h), following the
// "Constraints" of the StableHLO spec sections of the same names.
#include "src/ir/window_geometry.h"

#include <cstdint>

#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

using ir_internal::AttributeView;
using ir_internal::DimsToString;

Status Error(std::string_view op, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(op, ": ", message));
}

// Attribute `name` as a list of `size` integers each >= `min`, or `fallback` (repeated `size`
// times) when absent.
StatusOr<std::vector<int64_t>> ReadList(std::string_view op, const AttributeView& attrs,
                                        std::string_view name, size_t size, int64_t min,
                                        int64_t fallback, bool required) {
  if (attrs.Find(name) == nullptr) {
    if (required) return Error(op, StrCat("missing attribute ", name));
    return std::vector<int64_t>(size, fallback);
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> values, attrs.Ints(op, name));
  if (values.size() != size) {
    const bool pairs = name == "padding";
    return Error(op, StrCat(name, " ", DimsToString(values), " has ", values.size(),
                            " entries, expected ", size, pairs ? " (a low and a high" : " (one",
                            " per input dim)"));
  }
  for (size_t d = 0; d < size; ++d) {
    if (values[d] < min) {
      return Error(op, StrCat(name, " ", DimsToString(values), ": entry ", d, " is ", values[d],
                              ", expected at least ", min));
    }
  }
  return values;
}

}  // namespace

int64_t WindowGeometry::DilatedInput(size_t dim, int64_t input_size) const {
  return input_size == 0 ? 0 : (input_size - 1) * base_dilations[dim] + 1;
}

int64_t WindowGeometry::PaddedInput(size_t dim, int64_t input_size) const {
  return padding_low[dim] + DilatedInput(dim, input_size) + padding_high[dim];
}

int64_t WindowGeometry::DilatedWindow(size_t dim) const {
  return (window_dimensions[dim] - 1) * window_dilations[dim] + 1;
}

std::vector<int64_t> WindowGeometry::NumWindows(std::span<const int64_t> input_dims) const {
  std::vector<int64_t> windows(input_dims.size(), 0);
  for (size_t d = 0; d < input_dims.size(); ++d) {
    const int64_t padded = PaddedInput(d, input_dims[d]);
    const int64_t window = DilatedWindow(d);
    if (padded == 0 || window > padded) continue;  // spec is_empty_window
    windows[d] = (padded - window) / window_strides[d] + 1;
  }
  return windows;
}

StatusOr<WindowGeometry> ReadWindowGeometry(std::string_view op,
                                            std::span<const NamedAttribute> attributes,
                                            std::span<const int64_t> input_dims,
                                            bool with_dilations) {
  const AttributeView attrs(attributes);
  const size_t rank = input_dims.size();
  WindowGeometry g;
  ACCY_ASSIGN_OR_RETURN(g.window_dimensions,
                        ReadList(op, attrs, "window_dimensions", rank, 1, 1, true));
  ACCY_ASSIGN_OR_RETURN(g.window_strides, ReadList(op, attrs, "window_strides", rank, 1, 1, false));
  if (with_dilations) {
    ACCY_ASSIGN_OR_RETURN(g.base_dilations,
                          ReadList(op, attrs, "base_dilations", rank, 1, 1, false));
    ACCY_ASSIGN_OR_RETURN(g.window_dilations,
                          ReadList(op, attrs, "window_dilations", rank, 1, 1, false));
  } else {
    for (std::string_view name : {"base_dilations", "window_dilations"}) {
      if (attrs.Find(name) != nullptr) return Error(op, StrCat("has no attribute ", name));
    }
    g.base_dilations.assign(rank, 1);
    g.window_dilations.assign(rank, 1);
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                        ReadList(op, attrs, "padding", 2 * rank, INT64_MIN, 0, false));
  for (size_t d = 0; d < rank; ++d) {
    g.padding_low.push_back(padding[2 * d]);
    g.padding_high.push_back(padding[2 * d + 1]);
  }
  for (size_t d = 0; d < rank; ++d) {
    // Bounds keep the window arithmetic inside int64 (sizes are far below 2^62 in practice).
    constexpr int64_t kLimit = int64_t{1} << 40;
    if (g.window_dimensions[d] > kLimit || g.window_strides[d] > kLimit ||
        g.base_dilations[d] > kLimit || g.window_dilations[d] > kLimit ||
        g.padding_low[d] > kLimit || g.padding_low[d] < -kLimit || g.padding_high[d] > kLimit ||
        g.padding_high[d] < -kLimit) {
      return Error(op, StrCat("window attributes of dim ", d, " exceed 2^40"));
    }
    const int64_t padded = g.PaddedInput(d, input_dims[d]);
    if (padded < 0) {
      return Error(op, StrCat("dim ", d, ": padding [", g.padding_low[d], ", ",
                              g.padding_high[d], "] leaves a padded input size of ", padded,
                              ", expected at least 0"));
    }
  }
  return g;
}

WindowGeometry WindowGeometryOf(const Operation& op) {
  StatusOr<WindowGeometry> g =
      ReadWindowGeometry(op.name(), op.attributes(), op.operand(0)->type().dims(),
                         op.kind() == OpKind::kReduceWindow);
  ACCY_CHECK(g.ok());
  return *std::move(g);
}

}  // namespace accy
