// The argument checks every Communicator primitive makes before communicating
// (accy/collectives.h "Groups" and "Errors"), shared by the in-process and Gloo communicators
// so that both reject the same calls with the same messages. Pure functions, thread-safe.
#ifndef ACCY_SRC_COLLECTIVES_COMMUNICATOR_ARGUMENTS_H_
#define ACCY_SRC_COLLECTIVES_COMMUNICATOR_ARGUMENTS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "accy/collectives.h"
#include "accy/status.h"
#include "accy/types.h"

namespace accy::collectives {

// "{0, 2}".
std::string GroupString(std::span<const int> group);

// kInvalidArgument (naming `primitive` and the group) unless `group` is non-empty, its ranks
// are distinct and in [0, world_size), and it includes `rank`.
Status ValidateGroup(std::string_view primitive, std::span<const int> group, int rank,
                     int world_size);

// kInvalidArgument for a negative `bytes`, or a null `pointer` with positive `bytes`; `what`
// names the buffer ("send", "recv", "data").
Status ValidateBuffer(std::string_view primitive, std::string_view what, const void* pointer,
                      int64_t bytes);

// count * element_bytes (AllReduce), bytes * members (AllGather, AllToAll): kInvalidArgument
// when a factor is negative or the product does not fit in int64_t.
StatusOr<int64_t> TotalBytes(std::string_view primitive, int64_t count, int64_t element_bytes);

// AllReduce's `type` and `reduction` are values of their enums: else kInvalidArgument.
Status ValidateReduction(ElementType type, CollectiveReduction reduction);

// Broadcast's `root` is a position in a group of `members`: else kInvalidArgument.
Status ValidateRoot(std::span<const int> group, int root);

// Permute's peers are -1 or ranks of the world; a process sends to itself exactly when it
// receives from itself; the buffer of each side in use is valid for `bytes` (a side that is -1
// may pass null). Else kInvalidArgument.
Status ValidatePermute(int rank, int world_size, int send_to, const void* send, int recv_from,
                       const void* recv, int64_t bytes);

}  // namespace accy::collectives

#endif  // ACCY_SRC_COLLECTIVES_COMMUNICATOR_ARGUMENTS_H_
