// Communicators: how the processes of an SPMD program exchange data for its collective ops
// (all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute,
// collective_broadcast; StableHLO spec "Collective ops").
//
// A program with collectives runs as num_replicas x num_partitions processes (spec "Parallel
// execution"); each runs the same executable with its own Communicator, whose rank is the
// process id `replica_id * num_partitions + partition_id` and whose world size is the grid's
// size. The executor turns each collective op into calls of the primitives below over the
// process groups the op's attributes name (src/collectives/process_groups.h); the primitives
// know nothing of StableHLO.
//
// Two implementations behind this one interface:
//   - in-process: one Communicator per thread of one process (tests, and an SPMD program over
//     one host's cores): CreateInProcessCommunicators.
//   - Gloo (Debian's libgloo-dev, BSD-3-Clause; TCP transport): one Communicator per process,
//     rendezvous through a Gloo store (a shared folder or Redis): CreateGlooCommunicator.
// Neither lets an exception cross this interface: every failure is a Status.
#ifndef ACCY_COLLECTIVES_H_
#define ACCY_COLLECTIVES_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accy/status.h"
#include "accy/types.h"

namespace accy {

// The elementwise reductions a communicator applies natively (StableHLO bodies add, multiply,
// minimum, maximum; for i1 the executor maps or/and onto max/min). Other reduction bodies are
// gathered and folded by the executor.
enum class CollectiveReduction : uint8_t { kSum, kProduct, kMin, kMax };
// "sum", "product", "min", "max".
std::string_view CollectiveReductionName(CollectiveReduction reduction);

// One process's endpoint into a world of world_size() processes, ranks [0, world_size()).
//
// Groups: every collective names `group`, the ranks taking part in their group order (distinct,
// each in [0, world_size()), including rank()). Every member of a group calls the same
// primitive with the same group and sizes, and the members of a group make their calls on it
// in the same order (the SPMD program guarantees both); calls on different groups are
// independent. A group of one is a local copy, and a call of zero bytes returns once its
// arguments check out: neither communicates. The in-process world sees every member's
// arguments and fails a call whose members disagree (another primitive, size, type, root, or
// unmatched Permute peers) with kInvalidArgument on every member; Gloo cannot tell, and such a
// call fails with a timeout or garbles data. With Gloo, the first call on a group (other than
// the whole world in rank order) also connects its members, through the store.
//
// Errors (every primitive): kInvalidArgument for a malformed group, a negative size, or a null
// pointer with a positive size (nothing is sent); kDeadlineExceeded when a member has not
// arrived within the communicator's timeout; kUnavailable when a peer is gone (its connection
// closed: the process died; with Gloo also when a peer gave up on this call first, since a
// Gloo process that times out closes its connections); kInternal when Gloo fails otherwise.
// All name the primitive, the group and, where known, the peer (Gloo's message names the
// peer's address). After any of them but kInvalidArgument the communicator is broken: every
// later call returns kFailedPrecondition saying so (create a new world to continue).
//
// A Communicator is used by one thread at a time (the thread running its process's program).
class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // "in-process" or "gloo-tcp".
  virtual std::string_view kind() const = 0;

  // data[0, count) of `type` is replaced on every member by the elementwise reduction over the
  // group's members. The result is the same on every member, bit for bit (one fixed order of
  // combination per element: group order in-process, Gloo's ring order with Gloo; float sums and
  // products of more than two members may differ in the last bits between the two, and so may
  // the payload of a NaN that two members both hold); semantics as
  // src/collectives/element_reduction.h
  // (integers wrap, float min/max propagate NaN, f16/bf16 combined in f32 and rounded back after
  // each combination).
  virtual Status AllReduce(std::span<const int> group, void* data, int64_t count,
                           ElementType type, CollectiveReduction reduction) = 0;
  // AllReduce out of place: reads send[0, count) and writes the reduction into recv (which may
  // equal send; otherwise they must not overlap). The default copies send into recv and calls
  // AllReduce; the Gloo communicator hands both buffers to Gloo, which reads the input as it
  // reduces (no separate copy pass). Errors as AllReduce's.
  virtual Status AllReduceTo(std::span<const int> group, const void* send, void* recv,
                             int64_t count, ElementType type, CollectiveReduction reduction);
  // Every member contributes `bytes` bytes at `send`; `recv` (group.size() * bytes) receives
  // member i's bytes at offset i * bytes. `send` and `recv` must not overlap.
  virtual Status AllGather(std::span<const int> group, const void* send, int64_t bytes,
                           void* recv) = 0;
  // `send` holds group.size() chunks of `chunk_bytes`; chunk j goes to member j. `recv` (the
  // same size) receives member i's chunk for this member at offset i * chunk_bytes.
  virtual Status AllToAll(std::span<const int> group, const void* send, int64_t chunk_bytes,
                          void* recv) = 0;
  // The member at position `root` of `group` sends data[0, bytes); every other member receives
  // it into `data`.
  virtual Status Broadcast(std::span<const int> group, int root, void* data, int64_t bytes) = 0;
  // One step of a permutation in which every process of the world takes part (collective_permute):
  // sends send[0, bytes) to rank `send_to` and receives recv[0, bytes) from rank `recv_from`;
  // -1 means none (and its pointer may be null). Every process of the world calls it once per
  // step, with the same `bytes`, and the sends and receives of a step match (a sends to b
  // exactly when b receives from a; a process sending to itself receives from itself). `send`
  // and `recv` must not overlap.
  virtual Status Permute(int send_to, const void* send, int recv_from, void* recv,
                         int64_t bytes) = 0;
  // Breaks the world on purpose: this process's run failed and it will make no more calls, so
  // its peers should not wait for it until their timeout. In-process: every member waiting in
  // a primitive wakes at once with kDeadlineExceeded naming `reason`, and every later call of
  // any member fails (kFailedPrecondition). Gloo: this communicator's later calls fail; its
  // peers notice when the process exits and its connections close. Idempotent.
  virtual void Abort(std::string_view reason) {}
};

// A Communicator that forwards every call, Abort included, to `inner` (which must outlive it
// and is used from the same thread): derive from it to observe or change some calls (tracing,
// counting, the buffers a primitive got, fault injection) and inherit the rest. Errors: those
// of `inner`.
class ForwardingCommunicator : public Communicator {
 public:
  explicit ForwardingCommunicator(Communicator& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int world_size() const override { return inner_.world_size(); }
  std::string_view kind() const override { return inner_.kind(); }
  Status AllReduce(std::span<const int> group, void* data, int64_t count, ElementType type,
                   CollectiveReduction reduction) override {
    return inner_.AllReduce(group, data, count, type, reduction);
  }
  Status AllReduceTo(std::span<const int> group, const void* send, void* recv, int64_t count,
                     ElementType type, CollectiveReduction reduction) override {
    return inner_.AllReduceTo(group, send, recv, count, type, reduction);
  }
  Status AllGather(std::span<const int> group, const void* send, int64_t bytes,
                   void* recv) override {
    return inner_.AllGather(group, send, bytes, recv);
  }
  Status AllToAll(std::span<const int> group, const void* send, int64_t chunk_bytes,
                  void* recv) override {
    return inner_.AllToAll(group, send, chunk_bytes, recv);
  }
  Status Broadcast(std::span<const int> group, int root, void* data, int64_t bytes) override {
    return inner_.Broadcast(group, root, data, bytes);
  }
  Status Permute(int send_to, const void* send, int recv_from, void* recv,
                 int64_t bytes) override {
    return inner_.Permute(send_to, send, recv_from, recv, bytes);
  }
  void Abort(std::string_view reason) override { inner_.Abort(reason); }

 private:
  Communicator& inner_;
};

// Options shared by the communicators.
struct CommunicatorOptions {
  // How long a primitive waits for the other members (or a peer's bytes) before failing with
  // kDeadlineExceeded. Must be positive.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

// `world_size` communicators of one in-process world, ranks 0..world_size-1, for world_size
// threads of this process (each thread uses one). The primitives synchronize the threads and
// copy directly between their buffers. Errors: kInvalidArgument for world_size < 1 or a
// non-positive timeout.
StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateInProcessCommunicators(
    int world_size, const CommunicatorOptions& options = {});

// Where the processes of a Gloo world meet (a Gloo rendezvous store) and who this one is.
struct GlooOptions {
  int rank = 0;        // in [0, world_size)
  int world_size = 1;  // >= 1
  // "file:DIR": Gloo's FileStore in DIR (created when missing), for processes of one host or
  // hosts sharing a folder; "redis:HOST:PORT": Gloo's RedisStore on a Redis server reachable
  // from every host. Every process of the world gives the same store.
  std::string rendezvous;
  // Keys of this world in the store: several worlds may share one store under different
  // prefixes. Every process gives the same prefix. The keys stay in the store: a later world
  // needs a fresh folder or prefix.
  std::string prefix = "accy";
  // The address this process's TCP endpoint listens on and tells its peers: a host name or IP
  // of this host that the other hosts can reach ("127.0.0.1" for one host; empty: the address
  // the host name resolves to).
  std::string hostname = "127.0.0.1";
  CommunicatorOptions communicator;
};

// Joins the Gloo world `options` describes: connects to every other process through the store
// (waits up to options.communicator.timeout for all of them to publish their addresses; Gloo's
// TCP connect then waits up to 5 times that for a peer that published and went silent).
// Errors: kInvalidArgument for a rank outside [0, world_size), a world_size below 1, a
// non-positive timeout, a malformed rendezvous string, a store folder that cannot be created, a
// hostname that does not resolve, or a store that already holds this world's keys;
// kDeadlineExceeded naming the ranks that did not arrive in time (a wrong world size, a process
// that never started); kUnavailable when the store (Redis) or a peer cannot be reached.
// While a Gloo communicator exists, SIGPIPE stays blocked in Gloo's event-loop thread, and each
// call blocks it in the calling thread (a write to a dead peer would otherwise end the process).
StatusOr<std::unique_ptr<Communicator>> CreateGlooCommunicator(const GlooOptions& options);

// GlooOptions from the environment: ACCY_RANK, ACCY_WORLD_SIZE, ACCY_RENDEZVOUS (as
// GlooOptions::rendezvous), and optionally ACCY_RENDEZVOUS_PREFIX, ACCY_HOSTNAME,
// ACCY_COLLECTIVE_TIMEOUT_MS. Errors: kInvalidArgument naming a variable that is missing or
// not a number in range.
StatusOr<GlooOptions> GlooOptionsFromEnvironment();

}  // namespace accy

#endif  // ACCY_COLLECTIVES_H_
