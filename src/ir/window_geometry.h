// The window attributes of reduce_window and select_and_scatter (StableHLO spec sections of the
// same names): read once from an attribute list with the spec's defaults, checked against the
// spec's constraints, and the derived shapes (dilated and padded input, dilated window, number of
// windows) that the type rules, the reference evaluator and the JIT emitter all use, so the
// window arithmetic lives in one place. Plain values; thread-compatible.
#ifndef ACCY_SRC_IR_WINDOW_GEOMETRY_H_
#define ACCY_SRC_IR_WINDOW_GEOMETRY_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy {

// One window over a rank-R input; every vector has R entries.
struct WindowGeometry {
  std::vector<int64_t> window_dimensions;
  std::vector<int64_t> window_strides;    // absent: all 1
  std::vector<int64_t> base_dilations;    // absent: all 1 (select_and_scatter: always 1)
  std::vector<int64_t> window_dilations;  // absent: all 1 (select_and_scatter: always 1)
  std::vector<int64_t> padding_low;       // absent: all 0; may be negative
  std::vector<int64_t> padding_high;

  // Per dim: (d - 1) * base_dilation + 1, or 0 for an empty dim (spec dilated_input_shape).
  int64_t DilatedInput(size_t dim, int64_t input_size) const;
  // padding_low + dilated input + padding_high (spec padded_input_shape); may be negative when
  // negative padding removes more than the input has.
  int64_t PaddedInput(size_t dim, int64_t input_size) const;
  // (window_dimensions - 1) * window_dilations + 1 (spec dilated_window_shape).
  int64_t DilatedWindow(size_t dim) const;
  // The spec's num_windows for an input of `input_dims` (0 where the window does not fit).
  std::vector<int64_t> NumWindows(std::span<const int64_t> input_dims) const;
};

// Reads the window attributes of `op_name` ("reduce_window" or "select_and_scatter") for a
// rank-`rank` input from `attributes` (accy/ir.h documents their layout). `with_dilations`:
// reduce_window reads base_dilations and window_dilations; select_and_scatter has none and
// rejects them. Errors (kInvalidArgument, "<op>: <attribute> ..."): a missing
// window_dimensions, an attribute of the wrong kind, a list whose size is not the rank (padding:
// 2 * rank), a window dimension, stride or dilation below 1 (spec constraints C4-C12 of
// reduce_window, C4-C8 of select_and_scatter), or a padded input size below 0.
StatusOr<WindowGeometry> ReadWindowGeometry(std::string_view op_name,
                                            std::span<const NamedAttribute> attributes,
                                            std::span<const int64_t> input_dims,
                                            bool with_dilations);
// The geometry of a verified reduce_window or select_and_scatter `op` (its first operand's
// rank); ACCY_CHECKs that it reads (Verify accepted the op).
WindowGeometry WindowGeometryOf(const Operation& op);

}  // namespace accy

#endif  // ACCY_SRC_IR_WINDOW_GEOMETRY_H_
