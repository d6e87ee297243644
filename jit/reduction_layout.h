// Internal to jit/: the loop layout of a reduction work item (a reduce, or a reduction_input
// cluster whose elementwise producers feed the reduce) -- which buffers it reads, how its
// iteration space splits into lanes, rows, chunks, segments and blocks -- computed without LLVM
// so that the emitter (reduction_emitter.cc) only translates it. Reads the IR, the work item and
// the fusion plan without owning them; the layout points into them. Plain value, no state.
#ifndef ACCY_JIT_REDUCTION_LAYOUT_H_
#define ACCY_JIT_REDUCTION_LAYOUT_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "jit/kernel_signature.h"

namespace accy {
class FusionPlan;
struct WorkItem;
}  // namespace accy

namespace accy::jit {

// Lanes of a row-mode step (ROW below): one vector-friendly run of the contiguous reduced dim.
inline constexpr int64_t kReductionRowLanes = 64;
// Lanes (consecutive outputs) of an output-mode tile (OUT below).
inline constexpr int64_t kReductionTileLanes = 256;
// Steps (each a pass over the lanes) per chunk: a float sum adds at most this many terms per
// lane before the chunk's lanes join the pairwise cascade.
inline constexpr int64_t kReductionChunkSteps = 64;
// Input elements per block (a block holds whole units, at least one).
inline constexpr int64_t kReductionBlockElements = 32768;
// Split into segments (two-phase kernel, kernel_abi.h) when a unit reads at least twice this many
// elements and there are fewer than kReductionSplitMaxUnits units.
inline constexpr int64_t kReductionSegmentElements = 65536;
inline constexpr int64_t kReductionSplitMaxUnits = 64;
// Row mode needs a contiguous reduced dim at least this long.
inline constexpr int64_t kReductionMinRowExtent = 16;

// The reducer: a body of one associative op of its two arguments (as the reference's short cut
// recognises it) or a general body lowered op by op.
enum class ReduceCombiner : uint8_t { kGeneral, kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor };

// One external read of the loop body: a buffer (index into signature.inputs) or a folded
// one-element constant.
struct ReductionAccess {
  int buffer = -1;
  const uint8_t* constant = nullptr;
  ElementType type = ElementType::kF32;
};

// A loop dim after dropping size-1 dims and merging dims contiguous for every access.
struct ReductionLoopDim {
  int64_t extent = 1;
  std::vector<int64_t> strides;  // per access, in elements
};

// The layout. Terms:
//  - ROW mode (row_mode): the innermost input dim is reduced and the combiner is associative;
//    a unit is one output; the reduced space is `rows` rows (row_dims) of lane_dim.extent
//    elements, each row walked in steps of `lanes` elements (lane l accumulates elements
//    l, l + lanes, ...), the lanes combined by a fixed pairwise tree at the end.
//  - OUT mode: a unit is a tile of up to `lanes` consecutive outputs along the last kept dim
//    (lane_dim); every step reads one reduced coordinate for all lanes, in row-major order
//    (so a general body sees exactly the reference's sequential order).
//  - A chunk is kReductionChunkSteps steps (or whole rows when rows are shorter); with
//    `cascade` (float sums) each chunk's lanes are pushed into a binary-counter pairwise
//    cascade, so lanes hold at most kReductionChunkSteps terms before pairwise combination.
//  - `segments` > 1 splits each unit's chunks into segments computed by separate blocks
//    (partials to the scratch buffer), then one finish block combines them pairwise per unit.
struct ReductionLayout {
  const Operation* reduce = nullptr;
  int64_t num_results = 1;
  ReduceCombiner combiner = ReduceCombiner::kGeneral;
  const Operation* combiner_op = nullptr;  // the body's op for a named combiner
  ElementType type = ElementType::kF32;    // element type of result 0
  ElementType accumulator = ElementType::kF32;  // named float sums/products of f16/bf16: f32

  KernelSignature signature;
  std::vector<ReductionAccess> accesses;
  std::map<std::pair<const Operation*, int64_t>, int> access_of_use;  // (op, operand) -> access
  std::vector<ReductionAccess> inits;  // one per result

  bool row_mode = false;
  std::vector<ReductionLoopDim> unit_dims;  // decompose a unit's outer output coordinate
  std::vector<ReductionLoopDim> row_dims;   // decompose a row index
  ReductionLoopDim lane_dim;                // ROW: the innermost reduced dim; OUT: last kept dim
  int64_t lanes = 1;
  int64_t tiles_per_row = 1;  // OUT: tiles along lane_dim
  int64_t units = 0;
  int64_t rows = 1;
  int64_t steps_per_row = 1;

  bool cascade = false;
  bool chunk_splits_rows = false;  // a chunk is part of one row (steps_per_row >= chunk steps)
  int64_t chunks_per_row = 1;
  int64_t rows_per_chunk = 1;
  int64_t chunks = 0;  // per unit
  int64_t cascade_levels = 1;

  int64_t segments = 1;
  int64_t chunks_per_segment = 0;
  int64_t units_per_block = 1;
  int64_t partials_per_unit_segment = 1;  // ROW: 1; OUT: lanes
};

// Computes the layout of `item` (kind reduction; root a reduce). Errors: kUnimplemented naming
// the op the emitter cannot lower (a member that is not elementwise, a body op that is neither
// elementwise nor a constant, a producer of another shape), or the kind when the item is not a
// reduction; kInvalidArgument for a malformed reduce.
StatusOr<ReductionLayout> PlanReductionLayout(const WorkItem& item, const FusionPlan& fusion);

// Bytes of one accumulator lane of result `k` in memory (lanes, scratch): i1 is one byte.
int64_t AccumulatorBytes(const ReductionLayout& layout, int64_t k);

}  // namespace accy::jit

#endif  // ACCY_JIT_REDUCTION_LAYOUT_H_
