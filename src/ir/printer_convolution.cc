// The pretty-form tail of convolution for the StableHLO printer (printer_attributes.h):
// stablehlo's ConvDimensionNumbers syntax (`[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`), the
// window dictionary and the group counts, as StableHLO's own printer writes them.
#include <string>
#include <vector>

#include "src/ir/convolution_attributes.h"
#include "src/ir/printer_attributes.h"
#include "src/util/str_cat.h"

namespace accy::printer_internal {
namespace {

// `[b, 0, 1, f]`: per dim of a rank-`rank` tensor, `first`/`second` letter or spatial index.
std::string DimensionLayout(int64_t rank, int64_t first_dim, char first, int64_t second_dim,
                            char second, const std::vector<int64_t>& spatial) {
  std::string out = "[";
  for (int64_t d = 0; d < rank; ++d) {
    if (d > 0) out += ", ";
    if (d == first_dim) {
      out += first;
    } else if (d == second_dim) {
      out += second;
    } else {
      for (size_t s = 0; s < spatial.size(); ++s) {
        if (spatial[s] == d) out += StrCat(s);
      }
    }
  }
  return out + "]";
}

}  // namespace

std::string FormatConvolutionAttributes(const Operation& op) {
  const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(op);
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  const int64_t rank = op.operand(0)->type().rank();
  std::string out =
      StrCat("dim_numbers = ",
             DimensionLayout(rank, dn.input_batch_dimension, 'b', dn.input_feature_dimension, 'f',
                             dn.input_spatial_dimensions),
             "x",
             DimensionLayout(rank, dn.kernel_input_feature_dimension, 'i',
                             dn.kernel_output_feature_dimension, 'o', dn.kernel_spatial_dimensions),
             "->",
             DimensionLayout(rank, dn.output_batch_dimension, 'b', dn.output_feature_dimension, 'f',
                             dn.output_spatial_dimensions),
             ", window = {");
  std::vector<std::string> window;
  auto all = [](const std::vector<int64_t>& values, int64_t v) {
    for (int64_t x : values) {
      if (x != v) return false;
    }
    return true;
  };
  if (!all(spec.window_strides, 1)) {
    window.push_back(StrCat("stride = ", FormatIntList(spec.window_strides)));
  }
  bool padded = false;
  for (const auto& [low, high] : spec.padding) padded = padded || low != 0 || high != 0;
  if (padded) {
    std::string pad = "pad = [";
    for (size_t i = 0; i < spec.padding.size(); ++i) {
      if (i > 0) pad += ", ";
      pad += StrCat("[", spec.padding[i].first, ", ", spec.padding[i].second, "]");
    }
    window.push_back(pad + "]");
  }
  if (!all(spec.lhs_dilation, 1)) {
    window.push_back(StrCat("lhs_dilate = ", FormatIntList(spec.lhs_dilation)));
  }
  if (!all(spec.rhs_dilation, 1)) {
    window.push_back(StrCat("rhs_dilate = ", FormatIntList(spec.rhs_dilation)));
  }
  bool reversed = false;
  for (bool flag : spec.window_reversal) reversed = reversed || flag;
  if (reversed) {
    std::string reverse = "reverse = [";
    for (size_t i = 0; i < spec.window_reversal.size(); ++i) {
      if (i > 0) reverse += ", ";
      reverse += spec.window_reversal[i] ? "true" : "false";
    }
    window.push_back(reverse + "]");
  }
  for (size_t i = 0; i < window.size(); ++i) out += (i > 0 ? ", " : "") + window[i];
  out += StrCat("} {batch_group_count = ", spec.batch_group_count,
                " : i64, feature_group_count = ", spec.feature_group_count, " : i64");
  if (!spec.precision_config.empty()) {
    out += ", precision_config = [";
    for (size_t i = 0; i < spec.precision_config.size(); ++i) {
      if (i > 0) out += ", ";
      out += StrCat("#stablehlo<precision ", spec.precision_config[i], ">");
    }
    out += "]";
  }
  return out + "}";
}

}  // namespace accy::printer_internal
