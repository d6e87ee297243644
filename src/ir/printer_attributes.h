// Text forms of attribute values for the StableHLO printer (printer.cc): dense element literals,
// integer lists, symbol names and strings, spelled as MLIR's AsmPrinter spells them so that
// `stablehlo-opt` and accy's own parser read them back unchanged.
//
// Pure functions of their arguments; thread-safe. Internal to src/ir.
#ifndef ACCY_SRC_IR_PRINTER_ATTRIBUTES_H_
#define ACCY_SRC_IR_PRINTER_ATTRIBUTES_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "accy/ir.h"
#include "accy/types.h"

namespace accy::printer_internal {

// `dense<...>` for a constant payload: `dense<>` without elements, a single element for a splat,
// `dense<"0x...">` (raw little-endian bytes, uppercase hex) for more than
// kMaxInlineConstantElements non-splat elements (never for i1), else a nested list in row-major
// order, e.g. `dense<[[1, 2], [3, 4]]>`. The tensor type itself is not included.
std::string FormatDenseElements(const DenseElements& value);

// One element of `type` stored little-endian at `bytes` (ElementByteWidth(type) bytes): i1 as
// true/false, integers in decimal (unsigned types unsigned), floats as a decimal literal that
// parses back to the same bits (always with a '.'), NaN and infinities as their bit pattern
// (`0x7FC00000`, `0x7C00` for f16).
std::string FormatElement(ElementType type, const uint8_t* bytes);

// `[1, 2, 3]` (the body of an MLIR DenseI64ArrayAttr in custom op syntax).
std::string FormatIntList(std::span<const int64_t> values);
// `array<i64: 1, 2>` / `array<i64>` (a DenseI64ArrayAttr in attribute dictionaries).
std::string FormatI64Array(std::span<const int64_t> values);

// `@name` for a bare identifier ([A-Za-z_][A-Za-z0-9_$.]*), else `@"escaped"`.
std::string FormatSymbolName(std::string_view name);
// A double-quoted MLIR string literal (llvm::printEscapedString): `\` doubled, `"` and
// non-printable bytes as `\XX` hex escapes.
std::string FormatStringLiteral(std::string_view text);

// The tail of convolution's pretty form after its operands (printer_convolution.cc):
// `dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad =
// [[1, 1], [1, 1]], ...} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}`, window
// entries only where they differ from the defaults. `op` must be a verified convolution.
std::string FormatConvolutionAttributes(const Operation& op);

// A collective's attributes as an MLIR attribute dictionary with a leading space
// (" {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = ...}"),
// or "" when it has none (printer_collectives.cc).
std::string FormatCollectiveAttributes(const Operation& op);

}  // namespace accy::printer_internal

#endif  // ACCY_SRC_IR_PRINTER_ATTRIBUTES_H_
