// Buffer assignment: where every value a compiled function's work items read or write lives.
//
// Parameters live in the caller's input tensors and results in the caller's output tensors (no
// copies; so does a dying operand that a result is computed in place over); constants read by kernels live in one constant area filled at compile time; every
// other intermediate gets a 64-byte-aligned slice of one arena, and intermediates whose lifetimes
// (first write .. last read, in item order) do not overlap share memory. An item may write its
// output over an input at that input's last use (in place), and an aliasing item (a reshape that
// moves no data) gives its output the input's slice. Immutable once built; read from many threads.
#ifndef ACCY_SRC_RUNTIME_BUFFER_ASSIGNMENT_H_
#define ACCY_SRC_RUNTIME_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy {

// The buffers one work item reads and writes, in execution order (the executor builds these from
// the compiled items' kernel signatures).
struct ItemBuffers {
  std::vector<const Value*> inputs;
  std::vector<const Value*> outputs;
  // The item may write output 0 over an input whose last read is this item and whose byte size
  // equals the output's (elementwise kernels read element i before writing element i).
  bool may_write_in_place = false;
  // Per input (or empty: every input): whether output 0 may take that input's buffer under
  // may_write_in_place. False for an input the kernel reads at other indices than it writes
  // (through an elided broadcast that transposes or expands it).
  std::vector<bool> in_place_candidates;
  // Output 0 is input 0 reinterpreted (same bytes): it takes input 0's buffer, no kernel runs.
  bool output_aliases_input = false;
  // Per output (or empty): the input position the output computes in place over (kernel_call
  // `result_aliases`), else -1. Such an output takes that input's arena slice when this item is
  // the input's last read, the sizes match and no other operand of the item reads the same
  // value; when the output is a result of the function, that input is instead placed in the
  // caller's output buffer from the start (its producer writes there), under the same
  // conditions plus: an item writes it (not a parameter or a reshape's view), no reshape views
  // it, and its producer does not compute it in place itself. Otherwise the output gets a slice
  // of its own, which the executor (library items) or the kernel (an all_reduce's collective
  // kernel) fills with the input's bytes before computing (so a parameter or a value read later
  // is never overwritten).
  std::vector<int> output_in_place_on;
};

// Where one value lives.
struct BufferSlice {
  enum class Kind : uint8_t {
    kParameter,  // the caller's input tensor `index` (offset 0)
    kResult,     // the caller's output tensor `index` (offset 0)
    kConstant,   // the constant area, at `offset`
    kArena,      // the per-run arena, at `offset`
  };
  Kind kind = Kind::kArena;
  int64_t index = 0;   // parameter or result number
  int64_t offset = 0;  // bytes into the constant area or arena (64-byte aligned)
  int64_t bytes = 0;   // the value's byte size
};

class BufferAssignment {
 public:
  // Arena and constant slices are aligned to this many bytes.
  static constexpr int64_t kAlignment = 64;

  // Assigns buffers for `items` (in execution order) of `function`. Every input must be a
  // parameter, a constant or an earlier item's output; otherwise kInvalidArgument naming the
  // item and input. kOutOfRange if a size overflows 64 bits.
  static StatusOr<BufferAssignment> Assign(const Function& function,
                                           std::span<const ItemBuffers> items);

  // The slice of `value`, or null when no item reads or writes it and it is not returned.
  const BufferSlice* SliceOf(const Value* value) const;
  // Peak bytes of the arena (what one run needs) and bytes of the constant area.
  int64_t arena_bytes() const { return arena_bytes_; }
  int64_t constant_bytes() const { return constant_bytes_; }
  // Distinct arena regions handed out (a slice reused by a later value counts once).
  int64_t arena_buffer_count() const { return arena_buffer_count_; }
  // Constants that must be copied into the constant area: (constant op result, offset).
  const std::vector<std::pair<const Value*, int64_t>>& constants() const { return constants_; }
  // Results that the executor copies after the run: (result index, slice to copy from), for a
  // result that is a parameter, a constant, an aliased view, or a value returned twice.
  const std::vector<std::pair<int64_t, BufferSlice>>& result_copies() const {
    return result_copies_;
  }
  // One line per value with a slice (for dumps and tests).
  std::string ToString() const;

 private:
  std::unordered_map<const Value*, BufferSlice> slices_;
  std::vector<std::pair<const Value*, int64_t>> constants_;
  std::vector<std::pair<int64_t, BufferSlice>> result_copies_;
  int64_t arena_bytes_ = 0;
  int64_t constant_bytes_ = 0;
  int64_t arena_buffer_count_ = 0;
};

}  // namespace accy

#endif  // ACCY_SRC_RUNTIME_BUFFER_ASSIGNMENT_H_
