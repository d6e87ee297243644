// CreateGlooCommunicator and GlooOptionsFromEnvironment (accy/collectives.h): a Communicator
// over Gloo (Debian's libgloo-dev, git 2022-05-18; TCP transport).
//
// One TCP device and one Gloo context per process for the whole world (Permute, and groups that
// are the world in rank order), plus one context per other group, created at the first call on
// it by every member through the store under a key prefix derived from the group's rank list.
// Every Gloo exception is caught here and becomes a Status; after a failed exchange the Gloo
// contexts are in an unknown state, so the communicator refuses every later call.
//
// Gloo's TCP pairs write with writev(2), whose SIGPIPE on a dead peer's socket would kill the
// process: SIGPIPE is blocked in the calling thread during each call (and consumed when raised)
// and stays blocked in the device's event-loop thread, which inherits the mask. The store
// (gloo_store.h) waits with the communicator's deadline rather than Gloo's.
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "accy/collectives.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/alltoall.h"
#include "gloo/broadcast.h"
#include "gloo/common/error.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/transport/unbound_buffer.h"
#include "gloo/types.h"
#include "src/collectives/communicator_arguments.h"
#include "src/collectives/element_reduction.h"
#include "src/collectives/gloo_store.h"
#include "src/util/str_cat.h"

namespace accy {
namespace collectives {
namespace {

using Clock = std::chrono::steady_clock;

// Permute's slots, apart from the prefixes 0x01..0x08 of Gloo's own collectives (gloo/types.h).
constexpr uint8_t kPermuteSlotPrefix = 0x40;

// Blocks SIGPIPE in this thread for its lifetime; a SIGPIPE raised meanwhile (a write to a
// closed socket, which Gloo reports as an IoException) is consumed before the old mask returns.
// Threads started meanwhile (Gloo's event loop) inherit the blocked mask.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeBlock() {
    if (!sigismember(&previous_, SIGPIPE)) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE)) {
        const timespec zero{0, 0};
        sigtimedwait(&pipe_, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_;
  sigset_t previous_;
};

// The status of a gloo::IoException whose text is `what`, for `call`: Gloo tells timeouts apart
// only by their text ("Timed out waiting", "Read timeout", "Connect timeout", ...), which become
// kDeadlineExceeded; every other I/O failure (connection closed or refused) is kUnavailable.
// (Store failures arrive as StoreFailure, see StoreError.)
Status IoError(std::string_view call, std::string_view what) {
  std::string lower(what);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("timeout") != std::string::npos || lower.find("timed out") != std::string::npos) {
    return absl::DeadlineExceededError(StrCat(call, ": timed out (Gloo: ", what, ")"));
  }
  return absl::UnavailableError(StrCat(call, ": a peer or the store is gone (Gloo: ", what, ")"));
}

// The status of a failed rendezvous store (`failure`) for `call`.
Status StoreError(std::string_view call, std::string_view store, const StoreFailure& failure) {
  return Status(
      failure.timed_out ? absl::StatusCode::kDeadlineExceeded : absl::StatusCode::kUnavailable,
      StrCat(call, ": the rendezvous through ", store, " failed: ", failure.what()));
}

// One Gloo context (the world or one group) and the tag of its next collective (members call
// in the same order, so their tags agree).
struct GroupContext {
  std::shared_ptr<gloo::Context> context;
  uint32_t next_tag = 0;
};

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(GlooOptions options, std::unique_ptr<GlooStore> store,
                   std::shared_ptr<gloo::transport::Device> device,
                   std::shared_ptr<gloo::Context> world)
      : options_(std::move(options)), store_(std::move(store)), device_(std::move(device)) {
    std::vector<int> everyone(options_.world_size);
    for (int r = 0; r < options_.world_size; ++r) everyone[r] = r;
    contexts_[everyone].context = world;
    world_ = std::move(world);
  }
  ~GlooCommunicator() override {
    SigpipeBlock sigpipe;  // closing the pairs may write
    contexts_.clear();
    world_.reset();
    device_.reset();
  }

  int rank() const override { return options_.rank; }
  int world_size() const override { return options_.world_size; }
  std::string_view kind() const override { return "gloo-tcp"; }

  Status AllReduce(std::span<const int> group, void* data, int64_t count, ElementType type,
                   CollectiveReduction reduction) override {
    return AllReduceTo(group, data, data, count, type, reduction);
  }
  Status AllReduceTo(std::span<const int> group, const void* send, void* recv, int64_t count,
                     ElementType type, CollectiveReduction reduction) override;
  Status AllGather(std::span<const int> group, const void* send, int64_t bytes,
                   void* recv) override;
  Status AllToAll(std::span<const int> group, const void* send, int64_t chunk_bytes,
                  void* recv) override;
  Status Broadcast(std::span<const int> group, int root, void* data, int64_t bytes) override;
  Status Permute(int send_to, const void* send, int recv_from, void* recv, int64_t bytes) override;
  void Abort(std::string_view reason) override {
    if (broken_.empty()) broken_ = StrCat("aborted: ", reason);
  }

 private:
  Status CheckUsable(std::string_view call) const {
    if (broken_.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(
        StrCat(call, ": the Gloo communicator is broken by an earlier failure (", broken_,
               "); create a new world to continue"));
  }
  // Runs `body` (Gloo calls) with SIGPIPE blocked; a Gloo exception becomes a status naming
  // `call` and `peer` (a rank, or -1 when unknown) and breaks the communicator.
  template <typename Body>
  Status Guarded(const std::string& call, const int& peer, Body&& body);
  // The context of `group` (created with every member at the first call on it).
  GroupContext& ContextOf(std::span<const int> group);
  // Ranks of `group` whose address is not in the store under the group's `key_prefix`.
  std::vector<int> MissingRanks(const std::string& key_prefix, std::span<const int> group);

  const GlooOptions options_;
  std::unique_ptr<GlooStore> store_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> world_;
  std::map<std::vector<int>, GroupContext> contexts_;  // by group, in group order
  uint32_t next_permute_step_ = 0;
  std::string broken_;  // why the communicator is broken; empty while it works
  // Set while ContextOf connects a new group: what a store timeout was waiting for.
  std::string connecting_prefix_;
  std::vector<int> connecting_group_;
};

template <typename Body>
Status GlooCommunicator::Guarded(const std::string& call, const int& peer, Body&& body) {
  SigpipeBlock sigpipe;
  Status status;
  std::exception_ptr error;
  try {
    body();
    return absl::OkStatus();
  } catch (...) {
    error = std::current_exception();
  }
  // `body` sets `peer` as it goes: read it only now.
  const std::string where = peer >= 0 ? StrCat(call, " (peer rank ", peer, ")") : call;
  try {
    std::rethrow_exception(error);
  } catch (const StoreDeadlineExceeded&) {
    const std::vector<int> missing = MissingRanks(connecting_prefix_, connecting_group_);
    status = absl::DeadlineExceededError(StrCat(where, ": rank", missing.size() == 1 ? " " : "s ",
                                                absl::StrJoin(missing, ", "),
                                                " did not join the group's Gloo context within ",
                                                options_.communicator.timeout.count(), " ms"));
  } catch (const StoreFailure& e) {
    status = StoreError(where, StrCat(options_.rendezvous, " prefix '", options_.prefix, "'"), e);
  } catch (const gloo::IoException& e) {
    status = IoError(where, e.what());
  } catch (const std::exception& e) {  // gloo::EnforceNotMet (a failed Gloo check), ...
    status = absl::InternalError(StrCat(where, ": Gloo failed: ", e.what()));
  } catch (...) {
    status = absl::InternalError(StrCat(where, ": Gloo threw a non-standard exception"));
  }
  broken_ = std::string(status.message());
  return status;
}

std::vector<int> GlooCommunicator::MissingRanks(const std::string& key_prefix,
                                                std::span<const int> group) {
  std::vector<int> missing;
  for (size_t position = 0; position < group.size(); ++position) {
    try {
      if (group[position] != options_.rank && !store_->Has(StrCat(key_prefix, "/", position))) {
        missing.push_back(group[position]);
      }
    } catch (...) {
      missing.push_back(group[position]);  // the store failed too: cannot tell
    }
  }
  return missing;
}

void ConfirmConnected(const std::shared_ptr<gloo::rendezvous::Context>& context) {
  // connectFullMesh returns on a rank once its own pairs are connected, which for a pair it
  // dialled can be before the peer has processed the connection. A rank that then finished its
  // program and exited (one with no data to exchange, such as a collective_permute onto itself)
  // closed its sockets under a peer still connecting, which failed with "Connection closed by
  // peer". A barrier returns only after every member has connected, so no member leaves early.
  gloo::BarrierOptions barrier(context);
  gloo::barrier(barrier);
}

GroupContext& GlooCommunicator::ContextOf(std::span<const int> group) {
  std::vector<int> ranks(group.begin(), group.end());
  auto it = contexts_.find(ranks);
  if (it != contexts_.end()) return it->second;
  const int position =
      static_cast<int>(std::find(group.begin(), group.end(), options_.rank) - group.begin());
  const std::string group_prefix = StrCat("group:", absl::StrJoin(group, ","));
  connecting_prefix_ = StrCat(options_.prefix, "/", group_prefix);
  connecting_group_ = ranks;
  gloo::rendezvous::PrefixStore world_store(options_.prefix, store_->store());
  gloo::rendezvous::PrefixStore group_store(group_prefix, world_store);
  auto context =
      std::make_shared<gloo::rendezvous::Context>(position, static_cast<int>(group.size()));
  context->setTimeout(options_.communicator.timeout);
  store_->set_deadline(Clock::now() + options_.communicator.timeout);
  context->connectFullMesh(group_store, device_);  // throws: no entry is added
  ConfirmConnected(context);
  GroupContext& entry = contexts_[std::move(ranks)];
  entry.context = std::move(context);
  return entry;
}

// Calls `f` with a null pointer of the unsigned type `width` bytes wide (Gloo's typed options
// want an element type only for its size).
template <typename F>
void WithElementOfWidth(int64_t width, F&& f) {
  switch (width) {
    case 1:
      return f(static_cast<uint8_t*>(nullptr));
    case 2:
      return f(static_cast<uint16_t*>(nullptr));
    case 4:
      return f(static_cast<uint32_t*>(nullptr));
    case 8:
      return f(static_cast<uint64_t*>(nullptr));
  }
  ACCY_CHECK(false && "element width is 1, 2, 4 or 8 bytes");
}

Status GlooCommunicator::AllReduceTo(std::span<const int> group, const void* send, void* recv,
                                     int64_t count, ElementType type,
                                     CollectiveReduction reduction) {
  ACCY_RETURN_IF_ERROR(CheckUsable("AllReduce"));
  ACCY_RETURN_IF_ERROR(ValidateGroup("AllReduce", group, rank(), world_size()));
  ACCY_RETURN_IF_ERROR(ValidateReduction(type, reduction));
  const int64_t width = ElementByteWidth(type);
  ACCY_ASSIGN_OR_RETURN(const int64_t bytes, TotalBytes("AllReduce", count, width));
  if (send == recv) {
    ACCY_RETURN_IF_ERROR(ValidateBuffer("AllReduce", "data", recv, bytes));
  } else {
    ACCY_RETURN_IF_ERROR(ValidateBuffer("AllReduce", "send", send, bytes));
    ACCY_RETURN_IF_ERROR(ValidateBuffer("AllReduce", "recv", recv, bytes));
  }
  void* data = recv;
  // Out of place: the input is copied into the output and reduced there in place. Gloo's own
  // out-of-place allreduce (setInput != setOutput) was slower than the copy plus its in-place
  // ring: 64 MiB f32 on TCP loopback, W=2, 59.6 ms against 43.2 ms in place (Zen 4, ranks as
  // threads, bench/bench_collectives.cc), where the copy costs ~5 ms; with ranks as processes
  // on a Xeon (accy bench-collectives, 3 runs) the two are level: the executable's copy plus
  // ring at 0.96-1.09 of Gloo's out-of-place call at W=2, 1.00-1.04 at W=4.
  if (bytes > 0 && send != recv) std::memcpy(recv, send, static_cast<size_t>(bytes));
  if (group.size() == 1 || bytes == 0) return absl::OkStatus();
  const int no_peer = -1;
  return Guarded(StrCat("AllReduce over group ", GroupString(group)), no_peer, [&] {
    GroupContext& group_context = ContextOf(group);
    gloo::AllreduceOptions options(group_context.context);
    WithElementOfWidth(width, [&](auto* element) {
      using T = std::remove_pointer_t<decltype(element)>;
      options.setOutput(static_cast<T*>(data), static_cast<size_t>(count));  // in place
    });
    // Gloo calls it with out == in1 (the local chunk) and in2 the chunk from the ring.
    options.setReduceFunction(
        [type, reduction, width](void* out, const void* in1, const void* in2, size_t n) {
          if (out != in1) std::memmove(out, in1, n * static_cast<size_t>(width));
          CombineInto(out, in2, static_cast<int64_t>(n), type, reduction);
        });
    options.setTag(group_context.next_tag++);
    options.setTimeout(options_.communicator.timeout);
    gloo::allreduce(options);
  });
}

Status GlooCommunicator::AllGather(std::span<const int> group, const void* send, int64_t bytes,
                                   void* recv) {
  ACCY_RETURN_IF_ERROR(CheckUsable("AllGather"));
  ACCY_RETURN_IF_ERROR(ValidateGroup("AllGather", group, rank(), world_size()));
  ACCY_RETURN_IF_ERROR(ValidateBuffer("AllGather", "send", send, bytes));
  ACCY_ASSIGN_OR_RETURN(const int64_t total,
                        TotalBytes("AllGather", bytes, static_cast<int64_t>(group.size())));
  ACCY_RETURN_IF_ERROR(ValidateBuffer("AllGather", "recv", recv, total));
  if (bytes == 0) return absl::OkStatus();
  if (group.size() == 1) {
    std::memcpy(recv, send, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  const int no_peer = -1;
  return Guarded(StrCat("AllGather over group ", GroupString(group)), no_peer, [&] {
    GroupContext& group_context = ContextOf(group);
    gloo::AllgatherOptions options(group_context.context);
    options.setInput(static_cast<uint8_t*>(const_cast<void*>(send)), static_cast<size_t>(bytes));
    options.setOutput(static_cast<uint8_t*>(recv), static_cast<size_t>(total));
    options.setTag(group_context.next_tag++);
    options.setTimeout(options_.communicator.timeout);
    gloo::allgather(options);
  });
}

Status GlooCommunicator::AllToAll(std::span<const int> group, const void* send, int64_t chunk_bytes,
                                  void* recv) {
  ACCY_RETURN_IF_ERROR(CheckUsable("AllToAll"));
  ACCY_RETURN_IF_ERROR(ValidateGroup("AllToAll", group, rank(), world_size()));
  ACCY_ASSIGN_OR_RETURN(const int64_t total,
                        TotalBytes("AllToAll", chunk_bytes, static_cast<int64_t>(group.size())));
  ACCY_RETURN_IF_ERROR(ValidateBuffer("AllToAll", "send", send, total));
  ACCY_RETURN_IF_ERROR(ValidateBuffer("AllToAll", "recv", recv, total));
  if (chunk_bytes == 0) return absl::OkStatus();
  if (group.size() == 1) {
    std::memcpy(recv, send, static_cast<size_t>(chunk_bytes));
    return absl::OkStatus();
  }
  const int no_peer = -1;
  return Guarded(StrCat("AllToAll over group ", GroupString(group)), no_peer, [&] {
    GroupContext& group_context = ContextOf(group);
    gloo::AlltoallOptions options(group_context.context);
    options.setInput(static_cast<uint8_t*>(const_cast<void*>(send)), static_cast<size_t>(total));
    options.setOutput(static_cast<uint8_t*>(recv), static_cast<size_t>(total));
    options.setTag(group_context.next_tag++);
    options.setTimeout(options_.communicator.timeout);
    gloo::alltoall(options);
  });
}

Status GlooCommunicator::Broadcast(std::span<const int> group, int root, void* data,
                                   int64_t bytes) {
  ACCY_RETURN_IF_ERROR(CheckUsable("Broadcast"));
  ACCY_RETURN_IF_ERROR(ValidateGroup("Broadcast", group, rank(), world_size()));
  ACCY_RETURN_IF_ERROR(ValidateRoot(group, root));
  ACCY_RETURN_IF_ERROR(ValidateBuffer("Broadcast", "data", data, bytes));
  if (group.size() == 1 || bytes == 0) return absl::OkStatus();
  const int no_peer = -1;
  return Guarded(StrCat("Broadcast over group ", GroupString(group)), no_peer, [&] {
    GroupContext& group_context = ContextOf(group);
    gloo::BroadcastOptions options(group_context.context);
    options.setOutput(static_cast<uint8_t*>(data), static_cast<size_t>(bytes));
    options.setRoot(root);
    options.setTag(group_context.next_tag++);
    options.setTimeout(options_.communicator.timeout);
    gloo::broadcast(options);
  });
}

Status GlooCommunicator::Permute(int send_to, const void* send, int recv_from, void* recv,
                                 int64_t bytes) {
  ACCY_RETURN_IF_ERROR(CheckUsable("Permute"));
  ACCY_RETURN_IF_ERROR(
      ValidatePermute(rank(), world_size(), send_to, send, recv_from, recv, bytes));
  if (bytes == 0) return absl::OkStatus();
  const uint32_t step = next_permute_step_++;
  if (send_to == rank()) {
    std::memmove(recv, send, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  if (send_to < 0 && recv_from < 0) return absl::OkStatus();
  int peer = -1;
  return Guarded(StrCat("Permute step ", step), peer, [&] {
    const uint64_t slot = gloo::Slot::build(kPermuteSlotPrefix, step);
    std::unique_ptr<gloo::transport::UnboundBuffer> send_buffer, recv_buffer;
    if (send_to >= 0) {
      peer = send_to;
      send_buffer =
          world_->createUnboundBuffer(const_cast<void*>(send), static_cast<size_t>(bytes));
      send_buffer->send(send_to, slot);
    }
    if (recv_from >= 0) {
      peer = recv_from;
      recv_buffer = world_->createUnboundBuffer(recv, static_cast<size_t>(bytes));
      recv_buffer->recv(recv_from, slot);
      recv_buffer->waitRecv(options_.communicator.timeout);
    }
    if (send_to >= 0) {
      peer = send_to;
      send_buffer->waitSend(options_.communicator.timeout);
    }
  });
}

// The value of environment variable `name`, or null when unset.
const char* Environment(const char* name) { return std::getenv(name); }

StatusOr<int> IntFromEnvironment(const char* name, int64_t low, int64_t high) {
  const char* value = Environment(name);
  if (value == nullptr) {
    return absl::InvalidArgumentError(StrCat("environment variable ", name, " is not set"));
  }
  int64_t number = 0;
  if (!absl::SimpleAtoi(value, &number) || number < low || number > high) {
    return absl::InvalidArgumentError(StrCat("environment variable ", name, "='", value,
                                             "' is not an integer in [", low, ", ", high, "]"));
  }
  return static_cast<int>(number);
}

}  // namespace
}  // namespace collectives

StatusOr<std::unique_ptr<Communicator>> CreateGlooCommunicator(const GlooOptions& options) {
  using collectives::Clock;
  const std::string who =
      StrCat("CreateGlooCommunicator (rank ", options.rank, " of ", options.world_size, ")");
  if (options.world_size < 1) {
    return absl::InvalidArgumentError(StrCat(who, ": world_size is below 1"));
  }
  if (options.rank < 0 || options.rank >= options.world_size) {
    return absl::InvalidArgumentError(
        StrCat(who, ": rank is outside [0, ", options.world_size, ")"));
  }
  if (options.communicator.timeout.count() <= 0) {
    return absl::InvalidArgumentError(
        StrCat(who, ": timeout ", options.communicator.timeout.count(), " ms is not positive"));
  }
  ACCY_ASSIGN_OR_RETURN(const collectives::RendezvousSpec spec,
                        collectives::ParseRendezvous(options.rendezvous));
  // Gloo resolves the name itself but reads an uninitialized list when getaddrinfo fails.
  std::string hostname = options.hostname;
  if (hostname.empty()) {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0) {
      return absl::InvalidArgumentError(
          StrCat(who, ": gethostname failed: ", std::strerror(errno)));
    }
    hostname = name;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  if (const int rv = getaddrinfo(hostname.c_str(), nullptr, &hints, &addresses); rv != 0) {
    return absl::InvalidArgumentError(StrCat(who, ": GlooOptions::hostname '", hostname,
                                             "' does not resolve: ", gai_strerror(rv)));
  }
  freeaddrinfo(addresses);

  const std::string store_name = StrCat(options.rendezvous, " prefix '", options.prefix, "'");
  collectives::SigpipeBlock sigpipe;  // Gloo's event-loop thread inherits the blocked SIGPIPE
  auto opened = collectives::OpenGlooStore(spec, options.rendezvous, options.communicator.timeout);
  if (!opened.ok()) {
    return Status(opened.status().code(), StrCat(who, ": ", opened.status().message()));
  }
  std::unique_ptr<collectives::GlooStore> store = std::move(opened).value();
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> world;
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    device = gloo::transport::tcp::CreateDevice(attr);
    world = std::make_shared<gloo::rendezvous::Context>(options.rank, options.world_size);
    world->setTimeout(options.communicator.timeout);
    gloo::rendezvous::PrefixStore world_store(options.prefix, store->store());
    store->set_deadline(Clock::now() + options.communicator.timeout);
    world->connectFullMesh(world_store, device);
    collectives::ConfirmConnected(world);
  } catch (const collectives::StoreDeadlineExceeded&) {
    std::vector<int> missing;
    for (int r = 0; r < options.world_size; ++r) {
      try {
        if (r != options.rank && !store->Has(StrCat(options.prefix, "/", r))) missing.push_back(r);
      } catch (...) {
        missing.push_back(r);
      }
    }
    return absl::DeadlineExceededError(StrCat(
        who, ": rank", missing.size() == 1 ? " " : "s ", absl::StrJoin(missing, ", "),
        " did not join through ", store_name, " within ", options.communicator.timeout.count(),
        " ms (a process that never started, or a wrong world size)"));
  } catch (const collectives::StoreFailure& e) {
    return collectives::StoreError(who, store_name, e);
  } catch (const gloo::IoException& e) {
    return collectives::IoError(StrCat(who, " through ", store_name), e.what());
  } catch (const std::exception& e) {
    const std::string_view what = e.what();
    if (what.find("already exists") != what.npos || what.find("already set") != what.npos) {
      return absl::InvalidArgumentError(
          StrCat(who, ": ", store_name,
                 " already holds this rank's keys (every world needs a fresh "
                 "folder or prefix): ",
                 e.what()));
    }
    return absl::InternalError(StrCat(who, ": Gloo failed: ", e.what()));
  }
  return std::make_unique<collectives::GlooCommunicator>(options, std::move(store),
                                                         std::move(device), std::move(world));
}

StatusOr<GlooOptions> GlooOptionsFromEnvironment() {
  using collectives::Environment;
  using collectives::IntFromEnvironment;
  GlooOptions options;
  ACCY_ASSIGN_OR_RETURN(options.world_size,
                        IntFromEnvironment("ACCY_WORLD_SIZE", 1, std::numeric_limits<int>::max()));
  ACCY_ASSIGN_OR_RETURN(options.rank, IntFromEnvironment("ACCY_RANK", 0, options.world_size - 1));
  const char* rendezvous = Environment("ACCY_RENDEZVOUS");
  if (rendezvous == nullptr || *rendezvous == '\0') {
    return absl::InvalidArgumentError("environment variable ACCY_RENDEZVOUS is not set");
  }
  options.rendezvous = rendezvous;
  if (Status parsed = collectives::ParseRendezvous(options.rendezvous).status(); !parsed.ok()) {
    return absl::InvalidArgumentError(
        StrCat("environment variable ACCY_RENDEZVOUS: ", parsed.message()));
  }
  if (const char* prefix = Environment("ACCY_RENDEZVOUS_PREFIX")) options.prefix = prefix;
  if (const char* hostname = Environment("ACCY_HOSTNAME")) options.hostname = hostname;
  if (Environment("ACCY_COLLECTIVE_TIMEOUT_MS") != nullptr) {
    ACCY_ASSIGN_OR_RETURN(
        const int timeout_ms,
        IntFromEnvironment("ACCY_COLLECTIVE_TIMEOUT_MS", 1, std::numeric_limits<int>::max()));
    options.communicator.timeout = std::chrono::milliseconds(timeout_ms);
  }
  return options;
}

}  // namespace accy
