// CaseKernel (case_kernel.h).
#include "src/runtime/case_kernel.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "src/util/str_cat.h"

namespace accy {

CaseKernel::CaseKernel(std::string name, std::vector<TensorType> result_types,
                       std::vector<TensorType> captured_types, std::vector<Branch> branches)
    : name_(std::move(name)),
      result_types_(std::move(result_types)),
      captured_types_(std::move(captured_types)),
      branches_(std::move(branches)) {}

int64_t CaseKernel::peak_bytes() const {
  int64_t bytes = 0;
  for (const Branch& branch : branches_) {
    bytes = std::max(bytes, branch.executable->Stats().peak_memory_bytes);
  }
  return bytes;
}

Status CaseKernel::Run(void* const* buffers, const RunOptions& options) const {
  const size_t c = captured_types_.size();
  int32_t index = 0;
  std::memcpy(&index, buffers[0], sizeof(index));
  const int64_t n = num_branches();
  const int64_t chosen = index < 0 || index >= n ? n - 1 : int64_t{index};
  const Branch& branch = branches_[static_cast<size_t>(chosen)];
  std::vector<Tensor> inputs;
  inputs.reserve(branch.captured.size());
  for (int64_t slot : branch.captured) {
    const size_t j = static_cast<size_t>(slot);
    ACCY_ASSIGN_OR_RETURN(Tensor in, Tensor::Borrow(captured_types_[j], buffers[1 + j]));
    inputs.push_back(std::move(in));
  }
  std::vector<Tensor> outputs;
  outputs.reserve(result_types_.size());
  for (size_t r = 0; r < result_types_.size(); ++r) {
    ACCY_ASSIGN_OR_RETURN(Tensor out, Tensor::Borrow(result_types_[r], buffers[1 + c + r]));
    outputs.push_back(std::move(out));
  }
  Status status = branch.executable->Run(inputs, std::span<Tensor>(outputs), options);
  if (!status.ok()) {
    return absl::Status(status.code(), StrCat(name_, " branch ", chosen, ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace accy
