// The communicators' argument checks (communicator_arguments.h).
#include "src/collectives/communicator_arguments.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_join.h"
#include "src/util/str_cat.h"

namespace accy::collectives {

std::string GroupString(std::span<const int> group) {
  return StrCat("{", absl::StrJoin(group, ", "), "}");
}

Status ValidateGroup(std::string_view primitive, std::span<const int> group, int rank,
                     int world_size) {
  const std::string call = StrCat(primitive, " over group ", GroupString(group));
  if (group.empty()) return absl::InvalidArgumentError(StrCat(call, ": the group is empty"));
  bool has_rank = false;
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] < 0 || group[i] >= world_size) {
      return absl::InvalidArgumentError(
          StrCat(call, ": rank ", group[i], " is outside [0, ", world_size, ")"));
    }
    if (std::find(group.begin(), group.begin() + i, group[i]) != group.begin() + i) {
      return absl::InvalidArgumentError(StrCat(call, ": rank ", group[i], " appears twice"));
    }
    has_rank |= group[i] == rank;
  }
  if (!has_rank) {
    return absl::InvalidArgumentError(
        StrCat(call, ": the group does not include this communicator's rank ", rank));
  }
  return absl::OkStatus();
}

Status ValidateBuffer(std::string_view primitive, std::string_view what, const void* pointer,
                      int64_t bytes) {
  if (bytes < 0) {
    return absl::InvalidArgumentError(StrCat(primitive, ": negative size ", bytes, " of ", what));
  }
  if (bytes > 0 && pointer == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(primitive, ": ", what, " is null with ", bytes, " bytes"));
  }
  return absl::OkStatus();
}

StatusOr<int64_t> TotalBytes(std::string_view primitive, int64_t count, int64_t element_bytes) {
  if (count < 0 || element_bytes < 0) {
    return absl::InvalidArgumentError(
        StrCat(primitive, ": negative size ", std::min(count, element_bytes)));
  }
  if (element_bytes != 0 && count > INT64_MAX / element_bytes) {
    return absl::InvalidArgumentError(
        StrCat(primitive, ": ", count, " x ", element_bytes, " bytes overflow 64 bits"));
  }
  return count * element_bytes;
}

Status ValidateReduction(ElementType type, CollectiveReduction reduction) {
  if (std::find(std::begin(kAllElementTypes), std::end(kAllElementTypes), type) ==
      std::end(kAllElementTypes)) {
    return absl::InvalidArgumentError(
        StrCat("AllReduce: element type ", static_cast<int>(type), " is not an ElementType"));
  }
  if (static_cast<uint8_t>(reduction) > static_cast<uint8_t>(CollectiveReduction::kMax)) {
    return absl::InvalidArgumentError(StrCat("AllReduce: reduction ", static_cast<int>(reduction),
                                             " is not a CollectiveReduction"));
  }
  return absl::OkStatus();
}

Status ValidateRoot(std::span<const int> group, int root) {
  if (root < 0 || root >= static_cast<int>(group.size())) {
    return absl::InvalidArgumentError(StrCat("Broadcast over group ", GroupString(group),
                                             ": root position ", root, " is outside [0, ",
                                             group.size(), ")"));
  }
  return absl::OkStatus();
}

Status ValidatePermute(int rank, int world_size, int send_to, const void* send, int recv_from,
                       const void* recv, int64_t bytes) {
  for (const auto& [name, peer] : {std::pair{"send_to", send_to}, {"recv_from", recv_from}}) {
    if (peer < -1 || peer >= world_size) {
      return absl::InvalidArgumentError(StrCat(
          "Permute: ", name, " ", peer, " is neither -1 nor a rank in [0, ", world_size, ")"));
    }
  }
  if ((send_to == rank) != (recv_from == rank)) {
    return absl::InvalidArgumentError(
        StrCat("Permute: rank ", rank, " sends to ", send_to, " and receives from ", recv_from,
               " (a process that sends to itself receives from itself)"));
  }
  if (bytes < 0) return absl::InvalidArgumentError(StrCat("Permute: negative size ", bytes));
  if (send_to >= 0) ACCY_RETURN_IF_ERROR(ValidateBuffer("Permute", "send", send, bytes));
  if (recv_from >= 0) ACCY_RETURN_IF_ERROR(ValidateBuffer("Permute", "recv", recv, bytes));
  return absl::OkStatus();
}

}  // namespace accy::collectives
