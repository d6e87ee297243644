// `dense<...>` literals of the StableHLO importer: the parsed element tree and its decoding into
// accy's DenseElements (row-major little-endian bytes) once the tensor type is known.
//
// Plain values and pure functions; thread-safe.
#ifndef ACCY_SRC_STABLEHLO_DENSE_LITERAL_H_
#define ACCY_SRC_STABLEHLO_DENSE_LITERAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "accy/status.h"
#include "accy/types.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// One element as written: `-12`, `0x7FC00000`, `1.5e-3`, `true`, `inf`, `nan`.
struct DenseElementSyntax {
  enum class Kind { kInteger, kFloat, kBool, kInf, kNan, kComplex };
  Kind kind = Kind::kInteger;
  SourceLoc loc;
  bool negative = false;
  std::string text;  // digits (with 0x for hex) of kInteger / kFloat
  bool bool_value = false;
};

struct DenseLiteral {
  enum class Kind { kEmpty, kHex, kElement, kList };
  Kind kind = Kind::kEmpty;
  SourceLoc loc;
  std::string hex_bytes;  // kHex: the decoded payload of "0x..."
  DenseElementSyntax element;
  std::vector<DenseLiteral> items;
};

// The constant bytes one parse call has allocated, against its ParseOptions (accy/stablehlo.h):
// `text_bytes` for decoded dense literals (the parser), `module_bytes` for constants placed into
// modules (the importer, once per inlined copy). One per ParseStableHlo* call, shared by its
// chunks.
struct ConstantBudget {
  ParseOptions options;
  int64_t text_bytes = 0;
  int64_t module_bytes = 0;

  // Adds `bytes` (one constant of `type`, at `loc`) to `*count` ("the text's" or "the module's"
  // constants, `whose`). kResourceExhausted, located, naming the bytes and the limit, when the
  // constant alone exceeds options.max_constant_bytes or the count would exceed
  // options.max_total_constant_bytes; the count is then unchanged.
  Status Charge(int64_t bytes, const TensorType& type, SourceLoc loc, int64_t* count,
                std::string_view whose);
};

// The bytes of `literal` as a tensor of `type`, as MLIR reads DenseElementsAttr text:
//  - `dense<>` (and `dense<[]>`-shaped lists) only for zero elements;
//  - a single element is a splat; nested lists must match the dims exactly;
//  - "0x..." is the raw little-endian row-major payload (or one element, a splat); for i1 either
//    one byte per element or MLIR's bit-packed form;
//  - integers must fit the element type (signless i8 also takes 128..255, as MLIR does); a hex
//    element of a float type is its bit pattern; decimal floats round to nearest even.
// The decoded size is charged to budget->text_bytes before anything is allocated (a splat is
// checked at its expanded size before it is expanded).
// Errors: kInvalidArgument located at the offending element; ConstantBudget::Charge's
// kResourceExhausted.
StatusOr<DenseElements> DecodeDenseLiteral(const DenseLiteral& literal, const TensorType& type,
                                           ConstantBudget* budget);

// Splats whose expanded payload takes at least this many bytes stay one element in the syntax
// tree and in the module (AttrValue::splat_type): `dense<0.0> : tensor<8192x8192xf32>` allocates
// 4 bytes, not 256 MiB. Smaller splats are expanded as written (printing them back gives the
// text's form).
inline constexpr int64_t kMinUnexpandedSplatBytes = int64_t{64} << 10;

// When `literal` is a splat of `type` (one element, or a one-element hex payload, for more than
// one element) whose expanded payload takes at least kMinUnexpandedSplatBytes: its one element
// as a DenseElements of rank 0, charged to budget->text_bytes at the expanded size (the limits
// count splats at their expanded size either way). nullopt, charging nothing, for any other
// literal. Errors: DecodeDenseLiteral's.
StatusOr<std::optional<DenseElements>> DecodeLargeSplat(const DenseLiteral& literal,
                                                        const TensorType& type,
                                                        ConstantBudget* budget);

// The full payload of a kDense `value`: *value.dense, or its splat expanded to
// value.splat_type (already charged to the budget's counts). kResourceExhausted when the
// expansion cannot be allocated.
StatusOr<DenseElements> ExpandedDense(const AttrValue& value);

// The bits of one element of `type` (little-endian in the low ElementByteWidth bytes).
StatusOr<uint64_t> EncodeDenseElement(const DenseElementSyntax& element, ElementType type);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_DENSE_LITERAL_H_
