// IterateKernel (iterate_kernel.h): the while loop around the compiled cond and body.
#include "src/runtime/iterate_kernel.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "src/util/str_cat.h"

namespace accy {

IterateKernel::IterateKernel(std::string name, std::vector<TensorType> carried_types,
                             std::vector<TensorType> captured_types,
                             std::unique_ptr<Executable> cond, std::vector<int64_t> cond_captured,
                             std::unique_ptr<Executable> body, std::vector<int64_t> body_captured,
                             int64_t max_iterations)
    : name_(std::move(name)),
      carried_types_(std::move(carried_types)),
      captured_types_(std::move(captured_types)),
      cond_(std::move(cond)),
      cond_captured_(std::move(cond_captured)),
      body_(std::move(body)),
      body_captured_(std::move(body_captured)),
      max_iterations_(max_iterations) {}

IterateKernel::~IterateKernel() = default;

int64_t IterateKernel::peak_bytes() const {
  int64_t bytes = 1;  // the predicate
  for (const TensorType& type : carried_types_) bytes += static_cast<int64_t>(*type.ByteSize());
  return bytes + cond_->Stats().peak_memory_bytes + body_->Stats().peak_memory_bytes;
}

std::unique_ptr<IterateKernel::State> IterateKernel::Acquire() const {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!pool_.empty()) {
      std::unique_ptr<State> state = std::move(pool_.back());
      pool_.pop_back();
      return state;
    }
  }
  return nullptr;
}

void IterateKernel::Release(std::unique_ptr<State> state) const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool_.push_back(std::move(state));
}

Status IterateKernel::Run(void* const* buffers, const RunOptions& options) const {
  const size_t n = carried_types_.size();
  const size_t c = captured_types_.size();
  std::unique_ptr<State> state = Acquire();
  if (state == nullptr) {
    state = std::make_unique<State>();
    for (const TensorType& type : carried_types_) {
      ACCY_ASSIGN_OR_RETURN(Tensor spare, Tensor::Allocate(type));
      state->spare.push_back(std::move(spare));
    }
    ACCY_ASSIGN_OR_RETURN(TensorType pred_type, TensorType::Create(ElementType::kI1, {}));
    ACCY_ASSIGN_OR_RETURN(state->predicate, Tensor::Allocate(pred_type));
  }
  // Two state sets: 0 is the item's outputs, 1 the spare tensors.
  std::vector<Tensor>* sets = state->sets;
  std::vector<Tensor>& captured = state->captured;
  for (std::vector<Tensor>* list :
       {&sets[0], &sets[1], &captured, &state->cond_inputs[0], &state->cond_inputs[1],
        &state->body_inputs[0], &state->body_inputs[1]}) {
    list->clear();  // keeps its capacity
  }
  for (size_t i = 0; i < n; ++i) {
    ACCY_ASSIGN_OR_RETURN(Tensor out, Tensor::Borrow(carried_types_[i], buffers[n + c + i]));
    // The operands become the first state (the item's inputs never share the outputs' memory).
    if (out.byte_size() > 0) std::memcpy(out.data(), buffers[i], out.byte_size());
    sets[0].push_back(std::move(out));
    sets[1].push_back(state->spare[i]);
  }
  for (size_t j = 0; j < c; ++j) {
    ACCY_ASSIGN_OR_RETURN(Tensor in, Tensor::Borrow(captured_types_[j], buffers[n + j]));
    captured.push_back(std::move(in));
  }
  auto fill = [&](std::vector<Tensor>& inputs, int set, const std::vector<int64_t>& which) {
    inputs.insert(inputs.end(), sets[set].begin(), sets[set].end());
    for (int64_t index : which) inputs.push_back(captured[static_cast<size_t>(index)]);
  };
  for (int set = 0; set < 2; ++set) {
    fill(state->cond_inputs[set], set, cond_captured_);
    fill(state->body_inputs[set], set, body_captured_);
  }
  const std::vector<Tensor>* cond_inputs = state->cond_inputs;
  const std::vector<Tensor>* body_inputs = state->body_inputs;
  int current = 0;
  int64_t iterations = 0;
  Status status = absl::OkStatus();
  while (true) {
    status = cond_->Run(cond_inputs[current], std::span<Tensor>(&state->predicate, 1), options);
    if (!status.ok()) {
      status = absl::Status(status.code(), StrCat(name_, " cond: ", status.message()));
      break;
    }
    if (*static_cast<const uint8_t*>(state->predicate.data()) == 0) break;
    if (max_iterations_ > 0 && iterations >= max_iterations_) {
      status = absl::ResourceExhaustedError(
          StrCat(name_, ": while loop did not finish within ", max_iterations_,
                 " iterations (EngineOptions::max_while_iterations)"));
      break;
    }
    status = body_->Run(body_inputs[current], std::span<Tensor>(sets[1 - current]), options);
    if (!status.ok()) {
      status = absl::Status(status.code(), StrCat(name_, " body: ", status.message()));
      break;
    }
    current = 1 - current;
    ++iterations;
  }
  if (status.ok() && current == 1) {
    for (size_t i = 0; i < n; ++i) {
      if (sets[0][i].byte_size() > 0) {
        std::memcpy(sets[0][i].data(), sets[1][i].data(), sets[0][i].byte_size());
      }
    }
  }
  Release(std::move(state));
  return status;
}

}  // namespace accy
