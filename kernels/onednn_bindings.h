// The per-kind binders behind LibraryKernel (onednn_kernel.h): each turns ops into a
// BoundPrimitive (onednn_common.h), a oneDNN primitive or an internal host kernel. Internal to
// kernels/; pure functions of their inputs, thread-safe (oneDNN primitive creation is
// thread-safe).
#ifndef ACCY_KERNELS_ONEDNN_BINDINGS_H_
#define ACCY_KERNELS_ONEDNN_BINDINGS_H_

#include <span>
#include <string>

#include "accy/ir.h"
#include "accy/status.h"
#include "kernels/onednn_common.h"
#include "kernels/onednn_kernel.h"
#include "src/ir/lapack_targets.h"

namespace accy::kernels {

// kernel_call of a catalog target (onednn_kernel_call.cc).
StatusOr<BoundPrimitive> BindKernelCall(const Operation& call);

// dot_general plus epilogue chain (onednn_dot_general.cc). Fills `classification` (when not
// null) whether or not binding succeeds; with `classify_only` it stops before creating the
// primitive descriptor and returns an empty BoundPrimitive.
StatusOr<BoundPrimitive> BindDotGeneral(std::span<const Operation* const> ops,
                                        const FusionPlan* fusion,
                                        const LibraryKernelOptions& options,
                                        DotClassification* classification, bool classify_only);

// A convolution item on convolution_forward (onednn_convolution.cc): `ops` is the convolution
// then its epilogue (a convolution_epilogue cluster's elementwise ops, or none), mapped onto its
// bias and eltwise post_ops (no binary post-ops, relu or exp: onednn_dot_epilogue.cc) as a dot_general's
// epilogue is onto matmul's (onednn_dot_mapping.h MapEpilogue; `fusion` tells which broadcasts
// are elided). Buffers: lhs, rhs, then the first
// use of each other value the mapped epilogue reads, then the output: the root's result, or
// with options.allow_jit_epilogue the last mapped op's (the convolution's when none maps, or
// when post-ops would leave oneDNN only its reference implementation). kUnimplemented naming the
// reason when the convolution (or, without allow_jit_epilogue, an epilogue op) does not map
// exactly or oneDNN has only its reference implementation; kInvalidArgument when ops does not
// start with a convolution.
StatusOr<BoundPrimitive> BindConvolution(std::span<const Operation* const> ops,
                                         const FusionPlan* fusion,
                                         const LibraryKernelOptions& options);

// A reduce_window item on pooling_v2_forward (onednn_pooling.cc; StableHLO spec "reduce_window",
// oneDNN dev_guide_pooling.html): `ops` is the reduce_window then its epilogue (a
// reduce_window_epilogue cluster's elementwise ops, or none). Maps only an average pool: a
// one-result f32 reduce_window whose body is one add with init +0, over 1-3 spatial dims (the
// window of every other dim one element, stride 1, unpadded), no base dilation, every window
// holding at least one input element, followed by a divide by the window size
// (pooling_avg_include_padding) or by the same window's reduce_window of ones
// (pooling_avg_exclude_padding): the same sums in the same order and the same divide, so the
// bits are the reference evaluator's. Buffers: the reduce_window's input, then the output: the
// divide's result, which is the item's output or, with options.allow_jit_epilogue, the value the
// JIT computes the rest of the epilogue from. kUnimplemented naming the reason for everything
// else (max: oneDNN 2.6 drops NaN and gives -FLT_MAX for a window of -inf; docs/numerics.md;
// a dilated window: only oneDNN's reference implementation takes it); kInvalidArgument when ops
// does not start with a reduce_window.
StatusOr<BoundPrimitive> BindReduceWindow(std::span<const Operation* const> ops,
                                          const FusionPlan* fusion,
                                          const LibraryKernelOptions& options);

// A triangular_solve on Eigen (eigen_triangular_solve.cc): a host kernel (BoundPrimitive::host,
// implementation "eigen:trsm"); buffers a, b, result. Batches run on up to omp_get_max_threads()
// threads, read when binding. kInvalidArgument for another op; kUnimplemented for an element
// type other than f16, bf16, f32, f64; kResourceExhausted when the f16/bf16 scratch (4 bytes x
// (M^2 + b's matrix elements) per thread) cannot be allocated.
StatusOr<BoundPrimitive> BindTriangularSolve(const Operation& triangular_solve);

// An rng_bit_generator on Random123 (random123_rng_bit_generator.cc): a host kernel
// (BoundPrimitive::host, implementation "random123:threefry2x32-20" or
// "random123:philox4x32-10"); buffers initial_state, output_state, output. Blocks run on up to
// omp_get_max_threads() threads, read when binding, from 2^14 blocks. kInvalidArgument for
// another op, or an algorithm and state the verifier rejects (THREE_FRY takes 2 x ui64, PHILOX
// and DEFAULT 2 or 3); kUnimplemented for an output that is not of an integer or float type.
StatusOr<BoundPrimitive> BindRngBitGenerator(const Operation& rng_bit_generator);

// A lapack op on Debian's LAPACK (lapack_kernels.cc): a host kernel (BoundPrimitive::host,
// implementation "lapack:<s|d><routine>", e.g. "lapack:spotrf"); buffers a, then the routine's
// results (potrf: factor, info; getrf: lu, pivots, info; geqrf: a, tau; orgqr: a, tau, then
// q; syevd: v, w, info; gesdd: a, s, u, vt, info). Batches run one after another on the
// calling thread (LAPACK may thread inside a call). kInvalidArgument for another op; the
// target's kUnimplemented (lapack_targets.h) for an unbound one; kUnimplemented for matrices
// past LAPACK's 32-bit INTEGER; kResourceExhausted when the scratch of getrf, geqrf, orgqr or syevd
// (8 x (M x N + LAPACK's workspace) bytes) cannot be allocated.
StatusOr<BoundPrimitive> BindLapack(const Operation& lapack);

// BindLapack's gesdd (lapack_gesdd.cc): LAPACK xGESDD per batch on column-major copies; `name`
// names the item in errors, `target` is the op's parsed call_target_name (kGesdd). kUnimplemented
// for matrices whose workspace would pass LAPACK's 32-bit INTEGER; kResourceExhausted when the
// scratch (8 x (M N + u + vt + LAPACK's LWORK) bytes) cannot be allocated.
StatusOr<BoundPrimitive> BindLapackGesdd(const Operation& lapack, const std::string& name,
                                         const LapackTarget& target);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_ONEDNN_BINDINGS_H_
