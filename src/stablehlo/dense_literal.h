// `dense<...>` literals of the StableHLO importer: the parsed element tree and its decoding into
// accy's DenseElements (row-major little-endian bytes) once the tensor type is known.
//
// Plain values and pure functions; thread-safe.
#ifndef ACCY_SRC_STABLEHLO_DENSE_LITERAL_H_
#define ACCY_SRC_STABLEHLO_DENSE_LITERAL_H_

#include <string>
#include <vector>

#include "accy/ir.h"
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

// The bytes of `literal` as a tensor of `type`, as MLIR reads DenseElementsAttr text:
//  - `dense<>` (and `dense<[]>`-shaped lists) only for zero elements;
//  - a single element is a splat; nested lists must match the dims exactly;
//  - "0x..." is the raw little-endian row-major payload (or one element, a splat); for i1 either
//    one byte per element or MLIR's bit-packed form;
//  - integers must fit the element type (signless i8 also takes 128..255, as MLIR does); a hex
//    element of a float type is its bit pattern; decimal floats round to nearest even.
// Errors: kInvalidArgument located at the offending element; kResourceExhausted past
// kMaxParsedConstantBytes.
StatusOr<DenseElements> DecodeDenseLiteral(const DenseLiteral& literal, const TensorType& type);

// The bits of one element of `type` (little-endian in the low ElementByteWidth bytes).
StatusOr<uint64_t> EncodeDenseElement(const DenseElementSyntax& element, ElementType type);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_DENSE_LITERAL_H_
