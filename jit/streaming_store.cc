// Streaming output stores (streaming_store.h).
//
// The copy loop is explicit vector IR (<8 x i64> loads from the stage, stores with !nontemporal
// and align 64 under a run-time alignment test): the loop vectorizer refuses to widen a
// non-temporal store whose alignment it cannot prove, and our buffers' alignment is only known
// at run time.
#include "jit/streaming_store.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Metadata.h"

namespace accy::jit {

llvm::AllocaInst* CreateStreamingStage(llvm::IRBuilderBase& builder, llvm::Function& function) {
  llvm::IRBuilderBase::InsertPointGuard guard(builder);
  llvm::BasicBlock& entry = function.getEntryBlock();
  builder.SetInsertPoint(&entry, entry.getFirstInsertionPt());
  llvm::AllocaInst* stage = builder.CreateAlloca(
      llvm::ArrayType::get(builder.getInt8Ty(), static_cast<uint64_t>(kStreamingStageBytes)),
      nullptr, "stream.stage");
  stage->setAlignment(llvm::Align(64));
  return stage;
}

void EmitStreamingCopy(llvm::IRBuilderBase& builder, llvm::Function& function,
                       llvm::Value* stage, llvm::Value* destination, llvm::Value* bytes) {
  llvm::LLVMContext& context = builder.getContext();
  llvm::Type* i64 = builder.getInt64Ty();
  llvm::Type* piece = llvm::FixedVectorType::get(i64, 8);  // 64 bytes
  auto* stream = llvm::BasicBlock::Create(context, "stream", &function);
  auto* stream_body = llvm::BasicBlock::Create(context, "stream.body", &function);
  auto* stream_tail = llvm::BasicBlock::Create(context, "stream.tail", &function);
  auto* plain = llvm::BasicBlock::Create(context, "stream.plain", &function);
  auto* done = llvm::BasicBlock::Create(context, "stream.done", &function);

  llvm::Value* address = builder.CreatePtrToInt(destination, i64);
  llvm::Value* aligned =
      builder.CreateICmpEQ(builder.CreateAnd(address, builder.getInt64(63)), builder.getInt64(0));
  builder.CreateCondBr(aligned, stream, plain);

  builder.SetInsertPoint(stream);
  llvm::Value* pieces = builder.CreateLShr(bytes, 6);
  builder.CreateCondBr(builder.CreateICmpSGT(pieces, builder.getInt64(0)), stream_body,
                       stream_tail);
  builder.SetInsertPoint(stream_body);
  llvm::PHINode* k = builder.CreatePHI(i64, 2, "piece");
  k->addIncoming(builder.getInt64(0), stream);
  llvm::Value* offset = builder.CreateShl(k, 6);
  llvm::Value* value = builder.CreateAlignedLoad(
      piece, builder.CreateInBoundsGEP(builder.getInt8Ty(), stage, offset), llvm::Align(64));
  llvm::StoreInst* store = builder.CreateAlignedStore(
      value, builder.CreateInBoundsGEP(builder.getInt8Ty(), destination, offset), llvm::Align(64));
  store->setMetadata(llvm::LLVMContext::MD_nontemporal,
                     llvm::MDNode::get(context, {llvm::ConstantAsMetadata::get(builder.getInt32(1))}));
  llvm::Value* next = builder.CreateAdd(k, builder.getInt64(1), "piece.next", true, true);
  k->addIncoming(next, stream_body);
  builder.CreateCondBr(builder.CreateICmpSLT(next, pieces), stream_body, stream_tail);

  builder.SetInsertPoint(stream_tail);
  llvm::Value* copied = builder.CreateShl(pieces, 6);
  auto* tail_copy = llvm::BasicBlock::Create(context, "stream.tail.copy", &function);
  builder.CreateCondBr(builder.CreateICmpSLT(copied, bytes), tail_copy, done);
  builder.SetInsertPoint(tail_copy);
  builder.CreateMemCpy(builder.CreateInBoundsGEP(builder.getInt8Ty(), destination, copied),
                       llvm::MaybeAlign(64),
                       builder.CreateInBoundsGEP(builder.getInt8Ty(), stage, copied),
                       llvm::MaybeAlign(64), builder.CreateSub(bytes, copied));
  builder.CreateBr(done);

  builder.SetInsertPoint(plain);
  builder.CreateMemCpy(destination, llvm::MaybeAlign(1), stage, llvm::MaybeAlign(64), bytes);
  builder.CreateBr(done);
  builder.SetInsertPoint(done);
}

void EmitStreamingFence(llvm::IRBuilderBase& builder) {
  builder.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
}

}  // namespace accy::jit
