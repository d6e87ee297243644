// KernelPrologue (jit/kernel_prologue.h).
#include "jit/kernel_prologue.h"

#include <string>

#include "llvm/IR/MDBuilder.h"

namespace accy::jit {

KernelPrologue::KernelPrologue(llvm::Module& module, llvm::IRBuilder<>& builder,
                               std::string_view symbol, size_t buffer_count,
                               std::string_view domain,
                               std::initializer_list<std::string_view> extra_scopes) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* i64 = builder.getInt64Ty();
  llvm::Type* ptr = builder.getPtrTy();
  auto* type = llvm::FunctionType::get(builder.getVoidTy(), {ptr, ptr, i64, i64}, false);
  function_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                     llvm::StringRef(symbol.data(), symbol.size()), module);
  function_->setDoesNotThrow();
  // The buffer-pointer and byte-size arrays (kernel_abi.h) are only read, are not reached
  // through any other pointer during the call, and are not kept; buffers[] holds
  // buffer_count pointers.
  for (unsigned arg : {0u, 1u}) {
    function_->addParamAttr(arg, llvm::Attribute::NoAlias);
    function_->addParamAttr(arg, llvm::Attribute::NoCapture);
    function_->addParamAttr(arg, llvm::Attribute::ReadOnly);
  }
  if (buffer_count > 0) {
    function_->addDereferenceableParamAttr(0, buffer_count * sizeof(void*));
    function_->addParamAttr(0, llvm::Attribute::getWithAlignment(context, llvm::Align(alignof(void*))));
  }
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function_));

  llvm::MDBuilder md(context);
  llvm::MDNode* scope_domain =
      md.createAnonymousAliasScopeDomain(llvm::StringRef(domain.data(), domain.size()));
  std::vector<llvm::MDNode*> scopes = {md.createAnonymousAliasScope(scope_domain, "inputs"),
                                       md.createAnonymousAliasScope(scope_domain, "outputs")};
  for (std::string_view name : extra_scopes) {
    scopes.push_back(
        md.createAnonymousAliasScope(scope_domain, llvm::StringRef(name.data(), name.size())));
  }
  for (size_t k = 0; k < scopes.size(); ++k) {
    scopes_.push_back(llvm::MDNode::get(context, {scopes[k]}));
    std::vector<llvm::Metadata*> rest;
    for (size_t j = 0; j < scopes.size(); ++j) {
      if (j != k) rest.push_back(scopes[j]);
    }
    others_.push_back(llvm::MDNode::get(context, rest));
  }

  for (size_t i = 0; i < buffer_count; ++i) {
    llvm::Value* slot = builder.CreateConstInBoundsGEP1_64(ptr, function_->getArg(0), i);
    buffers_.push_back(builder.CreateLoad(ptr, slot, "buffer" + std::to_string(i)));
  }
}

void KernelPrologue::Tag(llvm::Instruction* access, size_t k) const {
  access->setMetadata(llvm::LLVMContext::MD_alias_scope, scopes_[k]);
  access->setMetadata(llvm::LLVMContext::MD_noalias, others_[k]);
}

void SetLoopHint(llvm::BranchInst* latch, std::string_view property, std::optional<int32_t> value) {
  llvm::LLVMContext& context = latch->getContext();
  std::vector<llvm::Metadata*> hint = {llvm::MDString::get(context, property)};
  if (value.has_value()) {
    hint.push_back(llvm::ConstantAsMetadata::get(
        llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), *value)));
  }
  llvm::Metadata* operands[] = {nullptr, llvm::MDNode::get(context, hint)};
  llvm::MDNode* loop_id = llvm::MDNode::getDistinct(context, operands);
  loop_id->replaceOperandWith(0, loop_id);  // a loop id names itself
  latch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
}

}  // namespace accy::jit
