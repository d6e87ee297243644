// Internal to jit/: the prologue every JIT kernel shares (XLA's KernelApiIrBuilder idea). It
// creates the kernel function of kernel_abi.h,
//
//   extern "C" void <symbol>(void* const* buffers, const int64_t* buffer_bytes,
//                            int64_t block_begin, int64_t block_end)   (nounwind)
//
// with `buffers` and `buffer_bytes` marked noalias, nocapture and readonly, and `buffers`
// dereferenceable for its buffer_count pointers and pointer-aligned,
// positions the caller's IRBuilder in its entry block after loading each buffer pointer once,
// and makes the alias scopes of its memory accesses: one domain per kernel with the scopes
// "inputs" and "outputs" (outputs never alias inputs, kernel_abi.h) plus any the emitter names
// (a reduction's stack lanes), so the vectorizer needs no runtime overlap checks and LICM can
// hoist loads out of loops that store. Includes LLVM headers: include it only from jit/*.cc.
// Not thread-safe (one IRBuilder); the caller owns the module.
#ifndef ACCY_JIT_KERNEL_PROLOGUE_H_
#define ACCY_JIT_KERNEL_PROLOGUE_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace accy::jit {

class KernelPrologue {
 public:
  // Scope indices: the two every kernel has, then the `extra_scopes` in order.
  static constexpr size_t kInputs = 0;
  static constexpr size_t kOutputs = 1;

  // Creates the function `symbol` in `module` and loads buffers[0 .. buffer_count) in its entry
  // block (named buffer0, buffer1, ...), leaving `builder` there. `domain` names the alias-scope
  // domain in the IR ("accy.dot", ...; names do not change codegen).
  KernelPrologue(llvm::Module& module, llvm::IRBuilder<>& builder, std::string_view symbol,
                 size_t buffer_count, std::string_view domain,
                 std::initializer_list<std::string_view> extra_scopes = {});

  llvm::Function* function() const { return function_; }
  // Base pointer of buffer `i` (i < buffer_count), loaded in the entry block.
  llvm::Value* buffer(size_t i) const { return buffers_[i]; }
  llvm::Value* block_begin() const { return function_->getArg(2); }
  llvm::Value* block_end() const { return function_->getArg(3); }

  // The scope list {scope k}, and the list of every other scope of the kernel.
  llvm::MDNode* scope(size_t k) const { return scopes_[k]; }
  llvm::MDNode* others(size_t k) const { return others_[k]; }
  // Marks `access` (a load or store) as in scope k and not aliasing any other scope.
  void Tag(llvm::Instruction* access, size_t k) const;

 private:
  llvm::Function* function_ = nullptr;
  std::vector<llvm::Value*> buffers_;
  std::vector<llvm::MDNode*> scopes_;
  std::vector<llvm::MDNode*> others_;
};

// Gives the loop whose back edge is `latch` the loop hint `property` (LLVM's loop metadata,
// LangRef "llvm.loop"): "llvm.loop.unroll.disable" alone, or a property with an i32 `value`
// such as "llvm.loop.interleave.count". Replaces any loop metadata the branch had.
void SetLoopHint(llvm::BranchInst* latch, std::string_view property, std::optional<int32_t> value = {});

}  // namespace accy::jit

#endif  // ACCY_JIT_KERNEL_PROLOGUE_H_
