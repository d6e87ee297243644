// The rendezvous store of a Gloo world (GlooOptions::rendezvous, accy/collectives.h): Gloo's
// FileStore ("file:DIR") or RedisStore ("redis:HOST:PORT") behind one interface whose waits end
// at a deadline the caller sets (Gloo's own waits count whole seconds, FileStore::get waits 30 s
// whatever the timeout, and a Redis command waits for its reply without limit). Owned by one
// GlooCommunicator and used by its thread only.
#ifndef ACCY_SRC_COLLECTIVES_GLOO_STORE_H_
#define ACCY_SRC_COLLECTIVES_GLOO_STORE_H_

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "accy/status.h"
#include "gloo/rendezvous/store.h"

namespace accy::collectives {

// A parsed GlooOptions::rendezvous: `folder` for "file:DIR", else `host` and `port`.
struct RendezvousSpec {
  std::string folder;
  std::string host;
  int port = 0;
};

// kInvalidArgument naming `rendezvous` unless it is "file:DIR" (DIR non-empty) or
// "redis:HOST:PORT" (PORT in [1, 65535]; HOST may hold colons, as an IPv6 address does).
StatusOr<RendezvousSpec> ParseRendezvous(std::string_view rendezvous);

// Thrown from a GlooStore wait when the deadline passes (inside Gloo's connectFullMesh, which
// lets it through); the communicator turns it into kDeadlineExceeded.
struct StoreDeadlineExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown from a GlooStore operation when its server fails: a Redis error reply (a server in
// protected mode, one that wants a password), a closed connection, or no reply before the
// deadline (`timed_out`). what() names the server; the communicator turns it into
// kDeadlineExceeded (timed_out) or kUnavailable. Gloo lets it through as it does
// StoreDeadlineExceeded.
struct StoreFailure : std::runtime_error {
  StoreFailure(const std::string& what, bool timed_out)
      : std::runtime_error(what), timed_out(timed_out) {}
  bool timed_out;
};

class GlooStore {
 public:
  virtual ~GlooStore() = default;
  // The store to hand to Gloo (wrap it in a gloo::rendezvous::PrefixStore).
  virtual gloo::rendezvous::Store& store() = 0;
  // Every wait from now on throws StoreDeadlineExceeded once `deadline` passes; every Redis
  // command gets the time left (at least 100 ms) to answer, else throws StoreFailure.
  virtual void set_deadline(std::chrono::steady_clock::time_point deadline) = 0;
  // Whether `key` (a full key, prefixes included) is set. May throw StoreFailure or Gloo's
  // exceptions.
  virtual bool Has(const std::string& key) = 0;
};

// Opens the store `spec` names: creates the folder (and its parents) when missing, or checks
// that the Redis server accepts a TCP connection within `timeout`. Errors, each naming
// `rendezvous`: kInvalidArgument for a folder that cannot be created, kUnavailable for a Redis
// server that cannot be reached (or whose host does not resolve). `timeout` also names the
// limit in a Redis command's timeout message.
StatusOr<std::unique_ptr<GlooStore>> OpenGlooStore(const RendezvousSpec& spec,
                                                   std::string_view rendezvous,
                                                   std::chrono::milliseconds timeout);

}  // namespace accy::collectives

#endif  // ACCY_SRC_COLLECTIVES_GLOO_STORE_H_
