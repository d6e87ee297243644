// The emitters of jit/, one per family of work kinds, all with one shape: emit
// `extern "C" void <symbol>(...)` (kernel_abi.h) computing `item` into `module` and report its
// buffers and blocks. Each lives in its own file (<family>_emitter.cc). Errors: kUnimplemented
// naming the op (and element type) or kind the emitter cannot lower -- never a silent fallback;
// kInvalidArgument for malformed attributes. Not thread-safe per module.
#ifndef ACCY_JIT_EMITTERS_H_
#define ACCY_JIT_EMITTERS_H_

#include <string_view>

#include "accy/status.h"
#include "jit/elementwise_emitter.h"
#include "jit/kernel_signature.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace accy {
class FusionPlan;
struct WorkItem;
}  // namespace accy

namespace accy::jit {

// What an emitter tunes its explicit vectors for: the widest vector register the JIT's target
// features allow (JitCompiler::isa(): 512 bits on AVX-512, 256 on AVX2, 128 below). Emitters
// that leave vector width to LLVM's vectorizers ignore it.
struct KernelTarget {
  int vector_bits = 512;
};

// kind shape: transpose, slice, pad, concatenate, iota, reverse, reshape, materialized
// broadcast_in_dim, gather, scatter, dynamic_slice, dynamic_update_slice (shape_emitter.cc),
// select_and_scatter (and a lone reduce_window, which the planner makes a reduce_window item;
// window_emitter.cc), sort and top_k (sort_emitter.cc).
StatusOr<KernelSignature> EmitShapeKernel(const WorkItem& item, const FusionPlan& fusion,
                                          llvm::Module& module, std::string_view symbol);
// kinds reduction (a reduce, or a reduction_input cluster rooted at one; reduction_emitter.cc,
// layout in reduction_layout.h; may be a two-phase kernel with scratch, kernel_abi.h) and scan
// (cumsum; scan_emitter.cc).
StatusOr<KernelSignature> EmitReductionKernel(const WorkItem& item, const FusionPlan& fusion,
                                              llvm::Module& module, std::string_view symbol);
StatusOr<KernelSignature> EmitScanKernel(const WorkItem& item, const FusionPlan& fusion,
                                         llvm::Module& module, std::string_view symbol);
// kinds row_pipeline and flash_attention (row_pipeline_emitter.cc, flash_attention_emitter.cc).
StatusOr<KernelSignature> EmitRowPipelineKernel(const WorkItem& item, const FusionPlan& fusion,
                                                llvm::Module& module, std::string_view symbol,
                                                const KernelTarget& target);
StatusOr<KernelSignature> EmitFlashAttentionKernel(const WorkItem& item, const FusionPlan& fusion,
                                                   llvm::Module& module, std::string_view symbol,
                                                   const KernelTarget& target);
// kind dot_general: a lone dot_general or a dot_epilogue cluster with its elementwise epilogue
// fused in the same kernel (dot_general_emitter.cc): any batch/contracting dims, float results
// accumulated in f32 (f64 for f64), integers modulo 2^bits; blocks of output rows x columns.
StatusOr<KernelSignature> EmitDotGeneralKernel(const WorkItem& item, const FusionPlan& fusion,
                                               llvm::Module& module, std::string_view symbol);
// kind reduce_window: a reduce_window (any body, dilations, padding; spec "reduce_window") and,
// for a reduce_window_epilogue cluster, its elementwise epilogue applied to each result before
// the store (window_emitter.cc); the reduce_window's own combinations are those of
// EmitReduceWindowKernel, so the bits are the reference evaluator's. kUnimplemented for an item
// of another kind or an epilogue op that is not elementwise over the result's dims.
StatusOr<KernelSignature> EmitReduceWindowItemKernel(const WorkItem& item, const FusionPlan& fusion,
                                                     llvm::Module& module, std::string_view symbol);
// kind convolution: a convolution (convolution_emitter.cc), every valid one (any dimension
// numbers, windows, groups; float and integer types) as a direct loop nest over output pixels
// vectorized over output features; floats accumulate in f32 (f64 for f64), integers modulo
// 2^bits; then its epilogue (a convolution_epilogue cluster's elementwise ops, item.ops after the
// convolution) on each output element before the store. The path for what the library (oneDNN)
// does not map (kernels/onednn_convolution.cc). kUnimplemented when item.ops does not start with
// a convolution followed by elementwise ops of its result dims ending at the item's output.
StatusOr<KernelSignature> EmitConvolutionKernel(const WorkItem& item, const FusionPlan& fusion,
                                                llvm::Module& module, std::string_view symbol);
// The epilogue of a dot_general, convolution or reduce_window item whose dot_general,
// convolution or reduce_window (and a prefix of whose epilogue) a library computes into
// `library_output`, a value of the item (dot_general_emitter.cc): the item's ops that
// `library_output` does not depend on, as an elementwise kernel (elementwise_emitter.h) with
// `library_output` among its input buffers. Errors: kInvalidArgument when library_output is not an
// item value computed from the dot or nothing is left to compute; kUnimplemented when a remaining
// op reads another value the library computes, or as EmitElementwiseKernel.
StatusOr<KernelSignature> EmitDotEpilogueKernel(const WorkItem& item, const Value& library_output,
                                                const FusionPlan& fusion, llvm::Module& module,
                                                std::string_view symbol);

}  // namespace accy::jit

#endif  // ACCY_JIT_EMITTERS_H_
