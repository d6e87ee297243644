// IterateKernel: how an `iterate` work item (StableHLO `while`, spec section "while") runs.
//
// The while's cond and body regions are outlined into functions of their own
// (src/ir/outline.h) and compiled by the same engine into two executables, so both run as
// compiled code (JIT and oneDNN items, fused and planned like any function). The executor calls
// this kernel around them:
//
//   state := operands;  while cond(state, captured...) { state := body(state, captured...) }
//   results := state
//
// Loop-carried buffers are reused: the state lives in the item's output buffers and one spare
// set of the same sizes (taken from a per-kernel pool, so runs after the first allocate
// nothing); the body reads one set and writes the other, and the sets swap each iteration.
// Thread-safe: several runs may execute one kernel at once (each takes its own spare set).
#ifndef ACCY_SRC_RUNTIME_ITERATE_KERNEL_H_
#define ACCY_SRC_RUNTIME_ITERATE_KERNEL_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "src/runtime/control_flow_kernel.h"

namespace accy {

class IterateKernel : public ControlFlowKernel {
 public:
  // `cond` takes (carried..., cond's captured...) and returns one tensor<i1>; `body` takes
  // (carried..., body's captured...) and returns the carried values. `cond_captured` and
  // `body_captured` give, for each captured parameter, its index among the item's captured
  // inputs. `max_iterations` > 0 bounds the trip count (EngineOptions::max_while_iterations);
  // 0 means unbounded. `name` names the item in errors.
  IterateKernel(std::string name, std::vector<TensorType> carried_types,
                std::vector<TensorType> captured_types, std::unique_ptr<Executable> cond,
                std::vector<int64_t> cond_captured, std::unique_ptr<Executable> body,
                std::vector<int64_t> body_captured, int64_t max_iterations);
  ~IterateKernel() override;

  // Buffers, in item order: N carried operands, C captured values, N results (the item's
  // outputs); `buffers` holds 2N+C pointers. Returns the first error of cond or body, or
  // kResourceExhausted naming the item when max_iterations is reached.
  Status Run(void* const* buffers, const RunOptions& options) const override;

  int64_t num_carried() const { return static_cast<int64_t>(carried_types_.size()); }
  int64_t num_captured() const { return static_cast<int64_t>(captured_types_.size()); }
  const Executable& cond() const { return *cond_; }
  const Executable& body() const { return *body_; }
  // Bytes a run needs besides the item's buffers: the spare state and the i1 predicate, plus
  // cond's and body's ExecutableStats::peak_memory_bytes (both keep their run state during the
  // loop).
  int64_t peak_bytes() const override;

 private:
  // Per-run state, pooled: the spare tensors and the argument lists (rebuilt each run in
  // place, so a run after the first allocates nothing).
  struct State {
    std::vector<Tensor> spare;  // one tensor per carried value
    Tensor predicate;           // tensor<i1>
    std::vector<Tensor> sets[2];  // 0: the item's outputs, 1: `spare`
    std::vector<Tensor> captured;
    std::vector<Tensor> cond_inputs[2];
    std::vector<Tensor> body_inputs[2];
  };
  std::unique_ptr<State> Acquire() const;
  void Release(std::unique_ptr<State> state) const;

  std::string name_;
  std::vector<TensorType> carried_types_;
  std::vector<TensorType> captured_types_;
  std::unique_ptr<Executable> cond_;
  std::vector<int64_t> cond_captured_;
  std::unique_ptr<Executable> body_;
  std::vector<int64_t> body_captured_;
  int64_t max_iterations_ = 0;
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<State>> pool_;
};

}  // namespace accy

#endif  // ACCY_SRC_RUNTIME_ITERATE_KERNEL_H_
