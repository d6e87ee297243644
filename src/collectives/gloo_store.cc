// The rendezvous store of a Gloo world (gloo_store.h).
#include "src/collectives/gloo_store.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "src/util/str_cat.h"

// Debian installs hiredis.h under hiredis/; gloo/rendezvous/redis_store.h asks for this macro.
#define HIREDIS_NESTED_INCLUDE 1
#include "gloo/common/error.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/rendezvous/redis_store.h"

namespace accy::collectives {
namespace {

using Clock = std::chrono::steady_clock;

// Gloo's FileStore whose waits poll every 5 ms until one deadline (FileStore::get waits 30 s
// whatever the timeout; `check` is protected: a subclass reaches it).
class FileDeadlineStore final : public gloo::rendezvous::FileStore, public GlooStore {
 public:
  explicit FileDeadlineStore(const std::string& folder) : FileStore(folder) {}

  gloo::rendezvous::Store& store() override { return *this; }
  void set_deadline(Clock::time_point deadline) override { deadline_ = deadline; }
  bool Has(const std::string& key) override { return check({key}); }

  // FileStore::get calls the one-argument wait.
  void wait(const std::vector<std::string>& keys) override { wait(keys, gloo::kNoTimeout); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& /*Gloo's timeout: the deadline rules*/) override {
    while (!check(keys)) {
      if (Clock::now() >= deadline_) {
        throw StoreDeadlineExceeded(StrCat("keys ", absl::StrJoin(keys, ", ")));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  Clock::time_point deadline_;
};

// `what` of a Gloo exception without the "[file:line] " GLOO_ERROR_MSG puts in front.
std::string_view WithoutSourceLocation(std::string_view what) {
  if (what.starts_with("[")) {
    if (const size_t end = what.find("] "); end != std::string_view::npos) {
      return what.substr(end + 2);
    }
  }
  return what;
}

// Gloo's RedisStore with the same deadline. hiredis's blocking context waits for a reply
// without limit, so a server that stops replying (stopped, swapped out, its host cut off)
// would hang the rendezvous: every command runs with the time left before the deadline as its
// socket timeout, at least kMinCommandTime (a command issued at the deadline still gets its
// answer, so a late rank is reported as late rather than the server as mute). A failed
// command (error reply, closed connection, no reply) throws StoreFailure naming the server;
// the hiredis context is unusable afterwards, as is the communicator.
class RedisDeadlineStore final : public gloo::rendezvous::RedisStore, public GlooStore {
 public:
  static constexpr std::chrono::milliseconds kMinCommandTime{100};

  RedisDeadlineStore(const std::string& host, int port, std::chrono::milliseconds timeout)
      : RedisStore(host, port),
        server_(StrCat(host, ":", port)),
        timeout_(timeout),
        deadline_(Clock::now() + timeout) {}

  gloo::rendezvous::Store& store() override { return *this; }
  void set_deadline(Clock::time_point deadline) override { deadline_ = deadline; }
  bool Has(const std::string& key) override {
    return Command([&] { return check({key}); });
  }

  // A key already there (a prefix reused by an earlier or concurrent world) is refused here:
  // Gloo's RedisStore::set throws on its failed SETNX without freeing the reply (48 bytes
  // LeakSanitizer reports under `make test-asan`). A key that appears between this check and
  // the SETNX still takes Gloo's path.
  void set(const std::string& key, const std::vector<char>& data) override {
    Command([&] {
      if (check({key})) {
        throw std::runtime_error(
            StrCat("key '", key, "' is already set in Redis server ", server_));
      }
      RedisStore::set(key, data);
      return true;
    });
  }
  // RedisStore::get calls wait (this one) before its GET.
  std::vector<char> get(const std::string& key) override {
    return Command([&] { return RedisStore::get(key); });
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, gloo::kNoTimeout); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& /*Gloo's timeout: the deadline rules*/) override {
    while (!Command([&] { return check(keys); })) {
      if (Clock::now() >= deadline_) {
        throw StoreDeadlineExceeded(StrCat("keys ", absl::StrJoin(keys, ", ")));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  // Runs `command` (RedisStore calls) under the socket timeout; Gloo's IoException becomes
  // StoreFailure (which an enclosing Command lets through untouched).
  template <typename F>
  auto Command(F&& command) -> decltype(command()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    const int64_t limit_ms = std::max(left, kMinCommandTime).count();
    const timeval limit{static_cast<time_t>(limit_ms / 1000),
                        static_cast<suseconds_t>(limit_ms % 1000 * 1000)};
    redisSetTimeout(redis_, limit);  // fails only when setsockopt does: the limit is then off
    try {
      return command();
    } catch (const gloo::IoException& e) {
      // hiredis reports a socket timeout as the I/O error EAGAIN.
      if (redis_->err == REDIS_ERR_IO &&
          std::string_view(redis_->errstr) == std::strerror(EAGAIN)) {
        throw StoreFailure(
            StrCat("Redis server ", server_, " did not reply before the ", timeout_.count(),
                   " ms timeout ran out (hiredis: ", redis_->errstr, ")"),
            /*timed_out=*/true);
      }
      throw StoreFailure(StrCat("Redis server ", server_, ": ", WithoutSourceLocation(e.what())),
                         /*timed_out=*/false);
    }
  }

  const std::string server_;  // host:port
  const std::chrono::milliseconds timeout_;
  Clock::time_point deadline_;
};

// OK when a TCP connection to host:port opens within `timeout`, else kUnavailable with the
// reason. Gloo's RedisStore leaks its hiredis context when its own connection fails (it throws
// from its constructor), so OpenGlooStore checks the server this way first.
Status ProbeTcp(const std::string& host, int port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  if (const int rv = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses);
      rv != 0) {
    return absl::UnavailableError(StrCat("'", host, "' does not resolve: ", gai_strerror(rv)));
  }
  std::string error = "no address";
  for (addrinfo* address = addresses; address != nullptr; address = address->ai_next) {
    const int fd = socket(address->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int failure = connect(fd, address->ai_addr, address->ai_addrlen) == 0 ? 0 : errno;
    if (failure == EINPROGRESS) {
      pollfd poll_fd{fd, POLLOUT, 0};
      const int ready =
          poll(&poll_fd, 1, static_cast<int>(std::min<int64_t>(timeout.count(), INT32_MAX)));
      failure = ready < 0 ? errno : ready == 0 ? ETIMEDOUT : 0;
      if (ready == 1) {
        socklen_t length = sizeof(failure);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length);
      }
    }
    close(fd);
    error = failure == 0 ? "" : std::strerror(failure);
    if (failure == 0) break;
  }
  freeaddrinfo(addresses);
  if (!error.empty()) return absl::UnavailableError(StrCat(host, ":", port, ": ", error));
  return absl::OkStatus();
}

}  // namespace

StatusOr<RendezvousSpec> ParseRendezvous(std::string_view rendezvous) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("GlooOptions::rendezvous '", rendezvous, "': ", why,
                                             " (expected file:DIR or redis:HOST:PORT)"));
  };
  RendezvousSpec spec;
  if (rendezvous.starts_with("file:")) {
    spec.folder = std::string(rendezvous.substr(5));
    if (spec.folder.empty()) return bad("no folder");
    return spec;
  }
  if (rendezvous.starts_with("redis:")) {
    const std::string_view rest = rendezvous.substr(6);
    const size_t colon = rest.rfind(':');
    if (rest.empty()) return bad("no host and port");
    if (colon == std::string_view::npos) return bad("no port");
    if (colon == 0) return bad("no host");
    spec.host = std::string(rest.substr(0, colon));
    const std::string_view port = rest.substr(colon + 1);
    if (!absl::SimpleAtoi(std::string(port), &spec.port) || spec.port < 1 || spec.port > 65535) {
      return bad(StrCat("port '", port, "' is not a number in [1, 65535]"));
    }
    return spec;
  }
  return bad("unknown store");
}

StatusOr<std::unique_ptr<GlooStore>> OpenGlooStore(const RendezvousSpec& spec,
                                                   std::string_view rendezvous,
                                                   std::chrono::milliseconds timeout) {
  if (!spec.folder.empty()) {
    std::error_code error;
    std::filesystem::create_directories(spec.folder, error);
    if (!std::filesystem::is_directory(spec.folder)) {
      return absl::InvalidArgumentError(
          StrCat("store '", rendezvous, "': the folder cannot be created: ",
                 error ? error.message() : "it exists and is not a folder"));
    }
  } else if (Status reachable = ProbeTcp(spec.host, spec.port, timeout); !reachable.ok()) {
    return absl::UnavailableError(
        StrCat("store '", rendezvous, "' cannot be reached: ", reachable.message()));
  }
  try {
    if (!spec.folder.empty()) {
      return std::make_unique<FileDeadlineStore>(spec.folder);
    }
    return std::make_unique<RedisDeadlineStore>(spec.host, spec.port, timeout);
  } catch (const std::exception& e) {
    return absl::UnavailableError(StrCat("store '", rendezvous, "' cannot be reached: ", e.what()));
  }
}

}  // namespace accy::collectives
