// CreateInProcessCommunicators (accy/collectives.h): world_size communicators over one shared
// World, one per thread.
//
// Every primitive is a rendezvous keyed by (group, the group's call number): each member posts
// its pointers and sizes, waits until every member has posted, copies what it needs straight
// from its peers' buffers, then waits until every member has finished reading before it returns
// (a sender may reuse its buffer as soon as its call returns). AllReduce folds the members' data
// in group order into a private copy (collectives::CombineInto) and writes it back only after
// that barrier, so every member gets the same bits. Permute is a rendezvous of the whole world.
// The World is guarded by one mutex; each communicator's call counters belong to its thread.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "accy/collectives.h"
#include "src/collectives/communicator_arguments.h"
#include "src/collectives/element_reduction.h"
#include "src/util/str_cat.h"

namespace accy {
namespace collectives {
namespace {

using Clock = std::chrono::steady_clock;

enum class Primitive : uint8_t { kAllReduce, kAllGather, kAllToAll, kBroadcast, kPermute };

std::string_view PrimitiveName(Primitive primitive) {
  switch (primitive) {
    case Primitive::kAllReduce:
      return "AllReduce";
    case Primitive::kAllGather:
      return "AllGather";
    case Primitive::kAllToAll:
      return "AllToAll";
    case Primitive::kBroadcast:
      return "Broadcast";
    case Primitive::kPermute:
      return "Permute";
  }
  return "unknown primitive";
}

// "AllGather over group {0, 2}" (Permute: "Permute step 3").
std::string CallName(Primitive primitive, std::span<const int> group, uint64_t sequence) {
  if (primitive == Primitive::kPermute) return StrCat("Permute step ", sequence);
  return StrCat(PrimitiveName(primitive), " over group ", GroupString(group));
}

// What one member brings to a rendezvous. `size` is AllReduce's element count, else bytes.
struct Post {
  Primitive primitive = Primitive::kAllReduce;
  const void* send = nullptr;
  int64_t size = 0;
  ElementType type = ElementType::kF32;
  CollectiveReduction reduction = CollectiveReduction::kSum;
  int root = 0;
  int send_to = -1;
  int recv_from = -1;
};

struct RendezvousKey {
  bool permute = false;    // Permute's world-wide steps count apart from the groups' calls
  std::vector<int> group;  // empty for Permute
  uint64_t sequence = 0;
  auto operator<=>(const RendezvousKey&) const = default;
};

struct Rendezvous {
  std::vector<Post> posts;  // by position in the group
  std::vector<bool> posted;
  int arrived = 0;
  int finished = 0;  // members done reading their peers' buffers
  int left = 0;
};

// The state shared by the communicators of one world.
class World {
 public:
  World(int size, std::chrono::milliseconds timeout) : size_(size), timeout_(timeout) {}

  int size() const { return size_; }

  // kFailedPrecondition naming `call` once a primitive has timed out in this world.
  Status CheckUsable(std::string_view call) {
    std::lock_guard<std::mutex> lock(mutex_);
    return CheckUsableLocked(call);
  }

  // Runs one rendezvous: posts `post` at `position` of `ranks` (the members' ranks in group
  // order), waits for the others, checks that every post matches (else kInvalidArgument for
  // every member), runs `read` (copies from the peers' posts), waits until every member has
  // read, then runs `write` (this member's own output, which peers may read until then).
  template <typename Read, typename Write>
  Status Run(const RendezvousKey& key, std::span<const int> ranks, int position, const Post& post,
             Read&& read, Write&& write);
  // Breaks the world (Communicator::Abort) and wakes every waiting member.
  void Abort(const std::string& reason) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_) {
      broken_ = true;
      broken_reason_ = reason;
    }
    changed_.notify_all();
  }

 private:
  Status CheckUsableLocked(std::string_view call) const {
    if (!broken_) return absl::OkStatus();
    return absl::FailedPreconditionError(
        StrCat(call, ": the in-process world is broken by an earlier failure (", broken_reason_,
               "); create a new world to continue"));
  }
  Status CheckPosts(const RendezvousKey& key, std::span<const int> ranks,
                    const std::vector<Post>& posts) const;

  const int size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool broken_ = false;  // after a timeout: every later call fails
  std::string broken_reason_;
  std::map<RendezvousKey, Rendezvous> rendezvous_;
};

template <typename Read, typename Write>
Status World::Run(const RendezvousKey& key, std::span<const int> ranks, int position,
                  const Post& post, Read&& read, Write&& write) {
  const Clock::time_point deadline = Clock::now() + timeout_;
  const int n = static_cast<int>(ranks.size());
  const std::string call = CallName(post.primitive, key.group, key.sequence);
  std::unique_lock<std::mutex> lock(mutex_);
  ACCY_RETURN_IF_ERROR(CheckUsableLocked(call));
  Rendezvous& rendezvous = rendezvous_[key];  // std::map: the reference survives other inserts
  if (rendezvous.posts.empty()) {
    rendezvous.posts.resize(n);
    rendezvous.posted.resize(n, false);
  }
  rendezvous.posts[position] = post;
  rendezvous.posted[position] = true;
  if (++rendezvous.arrived == n) changed_.notify_all();
  changed_.wait_until(lock, deadline, [&] { return rendezvous.arrived == n || broken_; });
  if (rendezvous.arrived != n) {
    // The entry stays behind: the world is broken, nobody reads it again.
    std::vector<int> missing;
    for (int i = 0; i < n; ++i) {
      if (!rendezvous.posted[i]) missing.push_back(ranks[i]);
    }
    const std::string ranks_missing = StrCat("rank", missing.size() == 1 ? " " : "s ",
                                             absl::StrJoin(missing, ", "));
    std::string message;
    if (broken_) {
      // Woken by a member's failure (Abort, or another member's timeout), not by this one's.
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
          Clock::now() - (deadline - timeout_));
      message = StrCat(call, ": stopped waiting for ", ranks_missing, " after ", waited.count(),
                       " ms (in-process world of ", size_, "): the world broke: ",
                       broken_reason_);
    } else {
      message = StrCat(call, ": ", ranks_missing, " did not arrive within ", timeout_.count(),
                       " ms (in-process world of ", size_, ")");
      broken_ = true;
      broken_reason_ = message;
      changed_.notify_all();
    }
    return absl::DeadlineExceededError(message);
  }
  // Every member has posted: the posts no longer change until everyone has left.
  const Status status = CheckPosts(key, ranks, rendezvous.posts);
  lock.unlock();
  if (status.ok()) read(rendezvous.posts);
  lock.lock();
  // Peers may read this member's buffers until they all finished: no timeout (they are running).
  if (++rendezvous.finished == n) changed_.notify_all();
  changed_.wait(lock, [&] { return rendezvous.finished == n; });
  if (++rendezvous.left == n) rendezvous_.erase(key);
  lock.unlock();
  if (status.ok()) write();
  return status;
}

Status World::CheckPosts(const RendezvousKey& key, std::span<const int> ranks,
                         const std::vector<Post>& posts) const {
  const Post& first = posts[0];
  const std::string call = CallName(first.primitive, key.group, key.sequence);
  for (size_t i = 1; i < posts.size(); ++i) {
    const Post& post = posts[i];
    const std::string member = StrCat("member ", i, " (rank ", ranks[i], ")");
    if (post.primitive != first.primitive) {
      return absl::InvalidArgumentError(
          StrCat(call, ": ", member, " called ", PrimitiveName(post.primitive), " instead"));
    }
    if (post.size != first.size || post.type != first.type || post.reduction != first.reduction ||
        post.root != first.root) {
      return absl::InvalidArgumentError(
          StrCat(call, ": ", member, " passes size ", post.size, " ", ElementTypeName(post.type),
                 " ", CollectiveReductionName(post.reduction), " root ", post.root,
                 ", member 0 size ", first.size, " ", ElementTypeName(first.type), " ",
                 CollectiveReductionName(first.reduction), " root ", first.root,
                 " (every member passes the same)"));
    }
  }
  if (first.primitive == Primitive::kPermute) {
    for (size_t r = 0; r < posts.size(); ++r) {
      const int to = posts[r].send_to;
      const int from = posts[r].recv_from;
      if (to >= 0 && posts[to].recv_from != static_cast<int>(r)) {
        return absl::InvalidArgumentError(StrCat(call, ": rank ", r, " sends to rank ", to,
                                                 ", which receives from ", posts[to].recv_from));
      }
      if (from >= 0 && posts[from].send_to != static_cast<int>(r)) {
        return absl::InvalidArgumentError(StrCat(call, ": rank ", r, " receives from rank ", from,
                                                 ", which sends to ", posts[from].send_to));
      }
    }
  }
  return absl::OkStatus();
}

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<World> world, int rank)
      : world_(std::move(world)), rank_(rank) {}

  int rank() const override { return rank_; }
  int world_size() const override { return world_->size(); }
  std::string_view kind() const override { return "in-process"; }

  Status AllReduce(std::span<const int> group, void* data, int64_t count, ElementType type,
                   CollectiveReduction reduction) override;
  Status AllGather(std::span<const int> group, const void* send, int64_t bytes,
                   void* recv) override;
  Status AllToAll(std::span<const int> group, const void* send, int64_t chunk_bytes,
                  void* recv) override;
  Status Broadcast(std::span<const int> group, int root, void* data, int64_t bytes) override;
  Status Permute(int send_to, const void* send, int recv_from, void* recv, int64_t bytes) override;
  void Abort(std::string_view reason) override {
    world_->Abort(StrCat("rank ", rank_, " aborted: ", reason));
  }

 private:
  // The rendezvous key of this member's next call on `group`.
  RendezvousKey NextKey(std::span<const int> group) {
    std::vector<int> ranks(group.begin(), group.end());
    const uint64_t sequence = next_sequence_[ranks]++;
    return RendezvousKey{false, std::move(ranks), sequence};
  }
  int PositionOf(std::span<const int> group) const {
    return static_cast<int>(std::find(group.begin(), group.end(), rank_) - group.begin());
  }

  std::shared_ptr<World> world_;
  const int rank_;
  std::map<std::vector<int>, uint64_t> next_sequence_;  // per group: calls made on it
  uint64_t next_permute_step_ = 0;
};

Status InProcessCommunicator::AllReduce(std::span<const int> group, void* data, int64_t count,
                                        ElementType type, CollectiveReduction reduction) {
  constexpr Primitive kPrimitive = Primitive::kAllReduce;
  const std::string_view name = PrimitiveName(kPrimitive);
  ACCY_RETURN_IF_ERROR(world_->CheckUsable(name));
  ACCY_RETURN_IF_ERROR(ValidateGroup(name, group, rank_, world_size()));
  ACCY_RETURN_IF_ERROR(ValidateReduction(type, reduction));
  ACCY_ASSIGN_OR_RETURN(const int64_t bytes, TotalBytes(name, count, ElementByteWidth(type)));
  ACCY_RETURN_IF_ERROR(ValidateBuffer(name, "data", data, bytes));
  if (group.size() == 1 || bytes == 0) return absl::OkStatus();
  const Post post{kPrimitive, data, count, type, reduction};
  std::vector<char> result(static_cast<size_t>(bytes));
  return world_->Run(
      NextKey(group), group, PositionOf(group), post,
      [&](const std::vector<Post>& posts) {
        std::memcpy(result.data(), posts[0].send, result.size());
        for (size_t i = 1; i < posts.size(); ++i) {
          CombineInto(result.data(), posts[i].send, count, type, reduction);
        }
      },
      [&] { std::memcpy(data, result.data(), result.size()); });
}

Status InProcessCommunicator::AllGather(std::span<const int> group, const void* send, int64_t bytes,
                                        void* recv) {
  constexpr Primitive kPrimitive = Primitive::kAllGather;
  const std::string_view name = PrimitiveName(kPrimitive);
  ACCY_RETURN_IF_ERROR(world_->CheckUsable(name));
  ACCY_RETURN_IF_ERROR(ValidateGroup(name, group, rank_, world_size()));
  ACCY_RETURN_IF_ERROR(ValidateBuffer(name, "send", send, bytes));
  ACCY_ASSIGN_OR_RETURN(const int64_t total,
                        TotalBytes(name, bytes, static_cast<int64_t>(group.size())));
  ACCY_RETURN_IF_ERROR(ValidateBuffer(name, "recv", recv, total));
  if (bytes == 0) return absl::OkStatus();
  if (group.size() == 1) {
    std::memcpy(recv, send, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  const Post post{kPrimitive, send, bytes};
  return world_->Run(
      NextKey(group), group, PositionOf(group), post,
      [&](const std::vector<Post>& posts) {
        for (size_t i = 0; i < posts.size(); ++i) {
          std::memcpy(static_cast<char*>(recv) + i * bytes, posts[i].send,
                      static_cast<size_t>(bytes));
        }
      },
      [] {});
}

Status InProcessCommunicator::AllToAll(std::span<const int> group, const void* send,
                                       int64_t chunk_bytes, void* recv) {
  constexpr Primitive kPrimitive = Primitive::kAllToAll;
  const std::string_view name = PrimitiveName(kPrimitive);
  ACCY_RETURN_IF_ERROR(world_->CheckUsable(name));
  ACCY_RETURN_IF_ERROR(ValidateGroup(name, group, rank_, world_size()));
  ACCY_ASSIGN_OR_RETURN(const int64_t total,
                        TotalBytes(name, chunk_bytes, static_cast<int64_t>(group.size())));
  ACCY_RETURN_IF_ERROR(ValidateBuffer(name, "send", send, total));
  ACCY_RETURN_IF_ERROR(ValidateBuffer(name, "recv", recv, total));
  if (chunk_bytes == 0) return absl::OkStatus();
  if (group.size() == 1) {
    std::memcpy(recv, send, static_cast<size_t>(chunk_bytes));
    return absl::OkStatus();
  }
  const int position = PositionOf(group);
  const Post post{kPrimitive, send, chunk_bytes};
  return world_->Run(
      NextKey(group), group, position, post,
      [&](const std::vector<Post>& posts) {
        for (size_t i = 0; i < posts.size(); ++i) {
          std::memcpy(static_cast<char*>(recv) + i * chunk_bytes,
                      static_cast<const char*>(posts[i].send) + position * chunk_bytes,
                      static_cast<size_t>(chunk_bytes));
        }
      },
      [] {});
}

Status InProcessCommunicator::Broadcast(std::span<const int> group, int root, void* data,
                                        int64_t bytes) {
  constexpr Primitive kPrimitive = Primitive::kBroadcast;
  const std::string_view name = PrimitiveName(kPrimitive);
  ACCY_RETURN_IF_ERROR(world_->CheckUsable(name));
  ACCY_RETURN_IF_ERROR(ValidateGroup(name, group, rank_, world_size()));
  ACCY_RETURN_IF_ERROR(ValidateRoot(group, root));
  ACCY_RETURN_IF_ERROR(ValidateBuffer(name, "data", data, bytes));
  if (group.size() == 1 || bytes == 0) return absl::OkStatus();
  const int position = PositionOf(group);
  Post post{kPrimitive, data, bytes};
  post.root = root;
  return world_->Run(
      NextKey(group), group, position, post,
      [&](const std::vector<Post>& posts) {
        if (position != root) std::memcpy(data, posts[root].send, static_cast<size_t>(bytes));
      },
      [] {});
}

Status InProcessCommunicator::Permute(int send_to, const void* send, int recv_from, void* recv,
                                      int64_t bytes) {
  constexpr Primitive kPrimitive = Primitive::kPermute;
  ACCY_RETURN_IF_ERROR(world_->CheckUsable(PrimitiveName(kPrimitive)));
  ACCY_RETURN_IF_ERROR(ValidatePermute(rank_, world_size(), send_to, send, recv_from, recv, bytes));
  if (bytes == 0) return absl::OkStatus();
  if (world_size() == 1) {
    if (send_to == rank_) std::memmove(recv, send, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  std::vector<int> world(world_size());
  for (int r = 0; r < world_size(); ++r) world[r] = r;
  Post post{kPrimitive, send, bytes};
  post.send_to = send_to;
  post.recv_from = recv_from;
  return world_->Run(
      RendezvousKey{true, {}, next_permute_step_++}, world, rank_, post,
      [&](const std::vector<Post>& posts) {
        if (recv_from >= 0) {
          std::memmove(recv, posts[recv_from].send, static_cast<size_t>(bytes));
        }
      },
      [] {});
}

}  // namespace
}  // namespace collectives

StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateInProcessCommunicators(
    int world_size, const CommunicatorOptions& options) {
  if (world_size < 1) {
    return absl::InvalidArgumentError(
        StrCat("CreateInProcessCommunicators: world_size ", world_size, " is below 1"));
  }
  if (options.timeout.count() <= 0) {
    return absl::InvalidArgumentError(StrCat("CreateInProcessCommunicators: timeout ",
                                             options.timeout.count(), " ms is not positive"));
  }
  auto world = std::make_shared<collectives::World>(world_size, options.timeout);
  std::vector<std::unique_ptr<Communicator>> communicators;
  communicators.reserve(world_size);
  for (int rank = 0; rank < world_size; ++rank) {
    communicators.push_back(std::make_unique<collectives::InProcessCommunicator>(world, rank));
  }
  return communicators;
}

}  // namespace accy
