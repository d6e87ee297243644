// Emitter of bitcast_convert between i1 and a wider type (shape_kernel_builder.h), a shape item
// of its own: packing or unpacking bits is not a view of the same bytes, so (unlike the other
// width-changing bitcasts) its result never aliases its operand (src/api/engine.cc).
#include "jit/shape_kernel_builder.h"
#include "src/util/str_cat.h"

namespace accy::jit {

// Spec "bitcast_convert" between i1 and a wider type (num_bits(i1) = 1): element i of the i1
// side is bit i % 8 of byte i / 8 of the other side's little-endian bytes; blocks of
// kShapeBlockElements bytes of the packed side. A stored i1 is true when its byte is nonzero.
StatusOr<KernelSignature> EmitBoolBitcastKernel(const Operation& op, llvm::Module& module,
                                                std::string_view symbol) {
  KernelSignature signature;
  AddInput(signature, op.operand(0));
  signature.outputs.push_back(op.result(0));
  const bool unpack = IsBool(op.result(0)->type().element_type());
  const Value* packed = unpack ? op.operand(0) : op.result(0);
  ACCY_ASSIGN_OR_RETURN(uint64_t packed_bytes, packed->type().ByteSize());
  const int64_t bytes = static_cast<int64_t>(packed_bytes);
  signature.block_size = kShapeBlockElements;
  signature.block_count = BlockCount(bytes, kShapeBlockElements);
  ShapeKernelBuilder k(module, symbol, 1, 1);
  llvm::IRBuilder<>& b = k.ir();
  auto [lo, hi] = k.BlockElements(kShapeBlockElements, bytes);
  ACCY_RETURN_IF_ERROR(k.Loop(lo, hi, [&](llvm::Value* byte) {
    llvm::Value* first_bool = b.CreateMul(byte, k.Int(8));
    if (unpack) {
      llvm::Value* bits = k.LoadBits(0, ElementType::kU8, byte);
      for (int j = 0; j < 8; ++j) {
        llvm::Value* bit = b.CreateAnd(b.CreateLShr(bits, b.getInt8(j)), b.getInt8(1));
        k.StoreBits(1, ElementType::kU8, b.CreateAdd(first_bool, k.Int(j)), bit);
      }
    } else {
      llvm::Value* bits = b.getInt8(0);
      for (int j = 0; j < 8; ++j) {
        llvm::Value* stored = k.LoadBits(0, ElementType::kU8, b.CreateAdd(first_bool, k.Int(j)));
        llvm::Value* bit = b.CreateZExt(b.CreateICmpNE(stored, b.getInt8(0)), b.getInt8Ty());
        bits = b.CreateOr(bits, b.CreateShl(bit, b.getInt8(j)));
      }
      k.StoreBits(1, ElementType::kU8, byte, bits);
    }
    return absl::OkStatus();
  }));
  k.Finish();
  return signature;
}

}  // namespace accy::jit
