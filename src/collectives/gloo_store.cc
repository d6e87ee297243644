// The rendezvous store of a Gloo world (gloo_store.h).
#include "src/collectives/gloo_store.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
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

// A Gloo store whose waits poll every 5 ms until one deadline (`check` is public in
// RedisStore, protected in FileStore: a subclass reaches both).
template <typename BaseStore>
class DeadlineStore final : public BaseStore, public GlooStore {
 public:
  template <typename... Args>
  explicit DeadlineStore(Args&&... args) : BaseStore(std::forward<Args>(args)...) {}

  gloo::rendezvous::Store& store() override { return *this; }
  void set_deadline(Clock::time_point deadline) override { deadline_ = deadline; }
  bool Has(const std::string& key) override { return this->check({key}); }

  // Gloo's FileStore::get and RedisStore::get call the one-argument wait.
  void wait(const std::vector<std::string>& keys) override { wait(keys, gloo::kNoTimeout); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& /*Gloo's timeout: the deadline rules*/) override {
    while (!this->check(keys)) {
      if (Clock::now() >= deadline_) {
        throw StoreDeadlineExceeded(StrCat("keys ", absl::StrJoin(keys, ", ")));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
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
    if (colon == std::string_view::npos || colon == 0) return bad("no host and port");
    spec.host = std::string(rest.substr(0, colon));
    if (!absl::SimpleAtoi(std::string(rest.substr(colon + 1)), &spec.port) || spec.port < 1 ||
        spec.port > 65535) {
      return bad("the port is not a number in [1, 65535]");
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
      return std::make_unique<DeadlineStore<gloo::rendezvous::FileStore>>(spec.folder);
    }
    return std::make_unique<DeadlineStore<gloo::rendezvous::RedisStore>>(spec.host, spec.port);
  } catch (const std::exception& e) {
    return absl::UnavailableError(StrCat("store '", rendezvous, "' cannot be reached: ", e.what()));
  }
}

}  // namespace accy::collectives
