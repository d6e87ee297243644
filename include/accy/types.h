// Element types and static tensor types of the accy IR.
//
// Semantics follow the StableHLO specification, section "Types": a tensor type is an element
// type plus static dimension sizes (rank 0 and up, zero-size dims allowed). accy supports the
// element types below; complex, quantized and f8 types are rejected by name. Values of these
// types are immutable and freely copyable; all functions are thread-safe.
#ifndef ACCY_TYPES_H_
#define ACCY_TYPES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "accy/status.h"

namespace accy {

// Element types, named as in StableHLO (`f32`, `i1`, `ui8` is printed for u8, and so on).
enum class ElementType : uint8_t {
  kF16,
  kBF16,
  kF32,
  kF64,
  kI1,  // boolean; stored as one byte per element, 0 or 1
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
};

inline constexpr ElementType kAllElementTypes[] = {
    ElementType::kF16, ElementType::kBF16, ElementType::kF32, ElementType::kF64,
    ElementType::kI1,  ElementType::kI8,   ElementType::kI16, ElementType::kI32,
    ElementType::kI64, ElementType::kU8,   ElementType::kU16, ElementType::kU32,
    ElementType::kU64};

// Short accy name: "f16", "bf16", "f32", "f64", "i1", "i8".."i64", "u8".."u64".
std::string_view ElementTypeName(ElementType type);
// StableHLO/MLIR spelling: as above but unsigned types are "ui8".."ui64".
std::string_view MlirElementTypeName(ElementType type);
// Parses either spelling. Complex ("complex<f32>"), quantized ("!quant..."), f8 ("f8E4M3FN"...)
// and any other name are kInvalidArgument errors naming the type and why.
StatusOr<ElementType> ParseElementType(std::string_view name);

// Bytes one element occupies in a host buffer (i1 takes 1 byte).
int64_t ElementByteWidth(ElementType type);
// Bits of the value (i1 is 1, f16 is 16).
int ElementBitWidth(ElementType type);
bool IsFloat(ElementType type);     // f16, bf16, f32, f64
bool IsInteger(ElementType type);   // signed or unsigned integer, not i1
bool IsSigned(ElementType type);    // i8..i64 (not i1)
bool IsUnsigned(ElementType type);  // u8..u64
bool IsBool(ElementType type);      // i1

// A static tensor type: element type and dims (each >= 0). Rank may be 0 (a scalar) up to
// kMaxRank. The element count (product of dims) is checked at creation and fits in int64_t.
class TensorType {
 public:
  static constexpr int kMaxRank = 16;

  // A rank-0 f32 tensor.
  TensorType() = default;

  // Errors (kInvalidArgument): an element type that is not a value of ElementType, a negative
  // dim, rank above kMaxRank, or an element count that does not fit in a signed 64-bit integer
  // (kOutOfRange).
  static StatusOr<TensorType> Create(ElementType element_type, std::vector<int64_t> dims);

  ElementType element_type() const { return element_type_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t dim(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  // Product of dims, in elements (1 for a scalar, 0 when any dim is 0).
  int64_t element_count() const { return element_count_; }
  // element_count * ElementByteWidth, in bytes; kOutOfRange when that overflows 64 bits
  // (the type itself stays valid: planning reports such a type as not statically sized).
  StatusOr<uint64_t> ByteSize() const;

  // The same dims with another element type.
  TensorType WithElementType(ElementType type) const;

  // MLIR spelling, e.g. "tensor<2x3xf32>", "tensor<f32>", "tensor<0x4xui8>".
  std::string ToString() const;

  bool operator==(const TensorType& other) const {
    return element_type_ == other.element_type_ && dims_ == other.dims_;
  }
  bool operator!=(const TensorType& other) const { return !(*this == other); }

 private:
  TensorType(ElementType element_type, std::vector<int64_t> dims, int64_t element_count)
      : element_type_(element_type), dims_(std::move(dims)), element_count_(element_count) {}

  ElementType element_type_ = ElementType::kF32;
  std::vector<int64_t> dims_;
  int64_t element_count_ = 1;
};

// Checked arithmetic on sizes: false (and *out unchanged) on overflow.
bool CheckedMul(int64_t a, int64_t b, int64_t* out);
bool CheckedAdd(int64_t a, int64_t b, int64_t* out);
bool CheckedMulU64(uint64_t a, uint64_t b, uint64_t* out);
bool CheckedAddU64(uint64_t a, uint64_t b, uint64_t* out);

}  // namespace accy

#endif  // ACCY_TYPES_H_
