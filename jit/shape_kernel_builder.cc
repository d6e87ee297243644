// Shape kernel scaffolding (shape_kernel_builder.h).
#include "jit/shape_kernel_builder.h"
#include "jit/index_math.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "src/util/str_cat.h"

namespace accy::jit {

size_t AddInput(KernelSignature& signature, const Value* value) {
  auto it = std::find(signature.inputs.begin(), signature.inputs.end(), value);
  if (it != signature.inputs.end()) return static_cast<size_t>(it - signature.inputs.begin());
  signature.inputs.push_back(value);
  return signature.inputs.size() - 1;
}

const uint8_t* ConstantScalarBytes(const Value& value) {
  const Operation* def = value.defining_op();
  if (def == nullptr || def->kind() != OpKind::kConstant || value.type().element_count() != 1) {
    return nullptr;
  }
  const DenseElements* dense = def->GetDense("value");
  if (dense == nullptr ||
      static_cast<int64_t>(dense->bytes.size()) != ElementByteWidth(value.type().element_type())) {
    return nullptr;
  }
  return dense->bytes.data();
}

int64_t IndexFromBytes(ElementType type, const uint8_t* bytes) {
  uint64_t bits = 0;
  const int width = ElementBitWidth(type);
  std::memcpy(&bits, bytes, static_cast<size_t>(ElementByteWidth(type)));
  if (IsSigned(type) && width < 64 && (bits >> (width - 1)) != 0) bits |= ~uint64_t{0} << width;
  if (!IsSigned(type) && width == 64 && bits > static_cast<uint64_t>(INT64_MAX)) return INT64_MAX;
  return static_cast<int64_t>(bits);
}

ShapeKernelBuilder::ShapeKernelBuilder(llvm::Module& module, std::string_view symbol, size_t inputs,
                                       size_t outputs)
    : module_(module),
      builder_(module.getContext()),
      lowering_(module, builder_),
      // Outputs never alias inputs (kernel ABI): the scopes spare the vectorizer runtime overlap
      // checks and let LICM hoist index loads out of the column loops.
      prologue_(module, builder_, symbol, inputs + outputs, "accy.shape"),
      inputs_(inputs) {
  function_ = prologue_.function();
  block_begin_ = prologue_.block_begin();
  block_end_ = prologue_.block_end();
  for (size_t b = 0; b < inputs + outputs; ++b) bases_.push_back(prologue_.buffer(b));
}

llvm::Value* ShapeKernelBuilder::Address(size_t buffer, llvm::Type* type, llvm::Value* index) {
  return builder_.CreateInBoundsGEP(type, bases_[buffer], index);
}

void ShapeKernelBuilder::Tag(llvm::Instruction* access, size_t buffer) {
  prologue_.Tag(access, buffer < inputs_ ? KernelPrologue::kInputs : KernelPrologue::kOutputs);
}

llvm::Value* ShapeKernelBuilder::LoadBits(size_t buffer, ElementType type, llvm::Value* index) {
  llvm::Type* bits = builder_.getIntNTy(static_cast<unsigned>(ElementByteWidth(type) * 8));
  llvm::LoadInst* load =
      builder_.CreateAlignedLoad(bits, Address(buffer, bits, index), llvm::Align(1));
  Tag(load, buffer);
  return load;
}

void ShapeKernelBuilder::StoreBits(size_t buffer, ElementType type, llvm::Value* index,
                                   llvm::Value* bits) {
  llvm::Type* bits_type = builder_.getIntNTy(static_cast<unsigned>(ElementByteWidth(type) * 8));
  Tag(builder_.CreateAlignedStore(bits, Address(buffer, bits_type, index), llvm::Align(1)), buffer);
}

llvm::Value* ShapeKernelBuilder::ElementPointer(size_t buffer, ElementType type,
                                               llvm::Value* index) {
  return Address(buffer, builder_.getIntNTy(static_cast<unsigned>(ElementByteWidth(type) * 8)),
                 index);
}

llvm::Value* ShapeKernelBuilder::BitsConstant(ElementType type, const uint8_t* bytes) {
  uint64_t bits = 0;
  std::memcpy(&bits, bytes, static_cast<size_t>(ElementByteWidth(type)));
  return builder_.getIntN(static_cast<unsigned>(ElementByteWidth(type) * 8), bits);
}

llvm::Value* ShapeKernelBuilder::LoadBitsVector(size_t buffer, ElementType type, llvm::Value* index,
                                                int64_t lanes) {
  llvm::Type* bits = builder_.getIntNTy(static_cast<unsigned>(ElementByteWidth(type) * 8));
  llvm::Type* vector = llvm::FixedVectorType::get(bits, static_cast<unsigned>(lanes));
  llvm::LoadInst* load =
      builder_.CreateAlignedLoad(vector, Address(buffer, bits, index), llvm::Align(1));
  Tag(load, buffer);
  return load;
}

void ShapeKernelBuilder::StoreBitsVector(size_t buffer, ElementType type, llvm::Value* index,
                                         llvm::Value* bits) {
  llvm::Type* bits_type = builder_.getIntNTy(static_cast<unsigned>(ElementByteWidth(type) * 8));
  Tag(builder_.CreateAlignedStore(bits, Address(buffer, bits_type, index), llvm::Align(1)), buffer);
}

llvm::Value* ShapeKernelBuilder::LoadElement(size_t buffer, ElementType type, llvm::Value* index) {
  llvm::Type* memory = MemoryType(module_.getContext(), type);
  llvm::LoadInst* load =
      builder_.CreateAlignedLoad(memory, Address(buffer, memory, index), llvm::Align(1));
  Tag(load, buffer);
  return lowering_.FromMemory(load, type);
}

void ShapeKernelBuilder::StoreElement(size_t buffer, ElementType type, llvm::Value* index,
                                      llvm::Value* value) {
  llvm::Type* memory = MemoryType(module_.getContext(), type);
  Tag(builder_.CreateAlignedStore(lowering_.ToMemory(value, type), Address(buffer, memory, index),
                                  llvm::Align(1)),
      buffer);
}

llvm::Value* ShapeKernelBuilder::LoadIndex(size_t buffer, ElementType type, llvm::Value* index) {
  llvm::Value* raw = LoadBits(buffer, type, index);
  llvm::Type* i64 = builder_.getInt64Ty();
  if (IsSigned(type)) return builder_.CreateSExtOrTrunc(raw, i64);
  llvm::Value* wide = builder_.CreateZExtOrTrunc(raw, i64);
  if (ElementBitWidth(type) < 64) return wide;
  return builder_.CreateSelect(builder_.CreateICmpSLT(wide, Int(0)),
                               Int(std::numeric_limits<int64_t>::max()), wide);
}

llvm::Value* ShapeKernelBuilder::Clamp(llvm::Value* value, llvm::Value* low, llvm::Value* high) {
  return builder_.CreateBinaryIntrinsic(
      llvm::Intrinsic::smax, low,
      builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, value, high));
}

llvm::Value* ShapeKernelBuilder::EntryAlloca(llvm::Type* type, std::string_view name) {
  llvm::BasicBlock& entry = function_->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.begin());
  return at_entry.CreateAlloca(type, nullptr, llvm::StringRef(name.data(), name.size()));
}

void ShapeKernelBuilder::CopyBuffer(size_t to, size_t from, int64_t bytes) {
  if (bytes <= 0) return;
  builder_.CreateMemCpy(bases_[to], llvm::Align(1), bases_[from], llvm::Align(1), Int(bytes));
}

Status ShapeKernelBuilder::Loop(llvm::Value* begin, llvm::Value* end, const IndexFn& body,
                                int64_t step) {
  llvm::LLVMContext& context = module_.getContext();
  llvm::BasicBlock* before = builder_.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(context, "loop", function_);
  auto* done = llvm::BasicBlock::Create(context, "loop_done", function_);
  builder_.CreateCondBr(builder_.CreateICmpSLT(begin, end), loop, done);
  builder_.SetInsertPoint(loop);
  llvm::PHINode* index = builder_.CreatePHI(builder_.getInt64Ty(), 2, "i");
  index->addIncoming(begin, before);
  ACCY_RETURN_IF_ERROR(body(index));
  llvm::Value* next =
      builder_.CreateAdd(index, Int(step), "i.next", /*HasNUW=*/true, /*HasNSW=*/true);
  index->addIncoming(next, builder_.GetInsertBlock());
  builder_.CreateCondBr(builder_.CreateICmpSLT(next, end), loop, done);
  builder_.SetInsertPoint(done);
  return absl::OkStatus();
}

Status ShapeKernelBuilder::If(llvm::Value* condition, const std::function<Status()>& then) {
  llvm::LLVMContext& context = module_.getContext();
  auto* taken = llvm::BasicBlock::Create(context, "then", function_);
  auto* done = llvm::BasicBlock::Create(context, "endif", function_);
  builder_.CreateCondBr(condition, taken, done);
  builder_.SetInsertPoint(taken);
  ACCY_RETURN_IF_ERROR(then());
  builder_.CreateBr(done);
  builder_.SetInsertPoint(done);
  return absl::OkStatus();
}

Status ShapeKernelBuilder::Rows(llvm::Value* lo, llvm::Value* hi, const std::vector<int64_t>& dims,
                                const RowFn& fn) {
  if (dims.size() <= 1) {
    // One row: positions are columns.
    return If(builder_.CreateICmpSLT(lo, hi), [&] { return fn({}, lo, hi, Int(0)); });
  }
  llvm::LLVMContext& context = module_.getContext();
  llvm::BasicBlock* before = builder_.GetInsertBlock();
  auto* segment = llvm::BasicBlock::Create(context, "segment", function_);
  auto* done = llvm::BasicBlock::Create(context, "segments_done", function_);
  builder_.CreateCondBr(builder_.CreateICmpSLT(lo, hi), segment, done);
  builder_.SetInsertPoint(segment);
  llvm::PHINode* pos = builder_.CreatePHI(builder_.getInt64Ty(), 2, "pos");
  pos->addIncoming(lo, before);
  llvm::Value* length = Int(dims.back());
  llvm::Value* row = builder_.CreateUDiv(pos, length, "row");
  llvm::Value* row_start = builder_.CreateMul(row, length);
  llvm::Value* segment_end = builder_.CreateBinaryIntrinsic(
      llvm::Intrinsic::smin, builder_.CreateAdd(row_start, length), hi);
  std::vector<llvm::Value*> outer(dims.size() - 1);
  llvm::Value* rest = row;
  for (size_t d = dims.size() - 1; d-- > 0;) {
    outer[d] = d == 0 ? rest : builder_.CreateURem(rest, Int(dims[d]));
    if (d > 0) rest = builder_.CreateUDiv(rest, Int(dims[d]));
  }
  ACCY_RETURN_IF_ERROR(fn(outer, builder_.CreateSub(pos, row_start),
                          builder_.CreateSub(segment_end, row_start), row_start));
  pos->addIncoming(segment_end, builder_.GetInsertBlock());
  builder_.CreateCondBr(builder_.CreateICmpSLT(segment_end, hi), segment, done);
  builder_.SetInsertPoint(done);
  return absl::OkStatus();
}

Status ShapeKernelBuilder::Elements(
    llvm::Value* lo, llvm::Value* hi, const std::vector<int64_t>& dims,
    const std::function<Status(const std::vector<llvm::Value*>&, llvm::Value*)>& fn) {
  return Rows(lo, hi, dims,
              [&](const std::vector<llvm::Value*>& outer, llvm::Value* col_begin,
                  llvm::Value* col_end, llvm::Value* row_start) {
                return Loop(col_begin, col_end, [&](llvm::Value* col) {
                  std::vector<llvm::Value*> coordinates = outer;
                  if (!dims.empty()) coordinates.push_back(col);
                  return fn(coordinates, builder_.CreateAdd(row_start, col));
                });
              });
}

std::pair<llvm::Value*, llvm::Value*> ShapeKernelBuilder::BlockElements(int64_t block_size,
                                                                        int64_t count) {
  llvm::Value* lo = builder_.CreateMul(block_begin_, Int(block_size));
  llvm::Value* hi = builder_.CreateBinaryIntrinsic(
      llvm::Intrinsic::smin, builder_.CreateMul(block_end_, Int(block_size)), Int(count));
  return {lo, hi};
}

void ShapeKernelBuilder::Finish() { builder_.CreateRetVoid(); }

}  // namespace accy::jit
