// Resource estimates of a work item (the seed's resourceEstimateForWork,
// seed/schedule_pass.zig.txt): element-op counts per op kind and byte sizes, saturating at
// UINT64_MAX instead of overflowing. Internal to src/schedule/ (schedule_planner.cc); pure
// functions of the IR, thread-safe.
#ifndef ACCY_SRC_SCHEDULE_ELEMENT_OPS_H_
#define ACCY_SRC_SCHEDULE_ELEMENT_OPS_H_

#include <cstdint>
#include <optional>
#include <span>

#include "accy/ir.h"
#include "src/analysis/shape_layout_analysis.h"

namespace accy {

// a + b and a * b, UINT64_MAX where the exact value does not fit.
uint64_t SaturatedAdd(uint64_t a, uint64_t b);
uint64_t SaturatedMul(uint64_t a, uint64_t b);

// The input element count of a lone reduce (its first operand's, from `shapes`); nullopt for
// any other item or an operand of unknown shape.
std::optional<uint64_t> ReductionInputElementCount(std::span<const Operation* const> ops,
                                                   const ShapeLayoutAnalysis& shapes);

// The estimated element operations of an item of `ops` whose output has `element_count`
// elements: per-kind counts for a lone dot_general (2 m n k, rank 2), convolution (2 x output
// elements x window x input features), reduce_window, reduce (its input elements), kernel_call
// (the kernel catalog's estimate), triangular_solve, rng_bit_generator and lapack (LAPACK
// Working Note 41 counts); a convolution or reduce_window with an epilogue adds one op per
// epilogue element; everything else is element_count x ops.size(), as the seed.
uint64_t EstimatedElementOps(std::span<const Operation* const> ops, uint64_t element_count,
                             const ShapeLayoutAnalysis& shapes);

// element_count x element byte width; nullopt for an unknown count or on overflow.
std::optional<uint64_t> TensorByteSize(const TensorInfo& info);

}  // namespace accy

#endif  // ACCY_SRC_SCHEDULE_ELEMENT_OPS_H_
