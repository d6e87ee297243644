// A redis-server child process for the tests of the Redis rendezvous (ACCY_RENDEZVOUS=redis:...;
// tests/collectives/gloo_redis_test.cc, tests/tools/spmd_cli_test.cc): Debian's redis-server on
// a free 127.0.0.1 port, no persistence, its output in a temporary file. The object owns the
// process: its destructor kills (SIGKILL) and reaps it, and the child gets SIGKILL when the
// test process dies. Use from one thread (the test's), except Kill(), see below.
//
// Header-only; test sources only.
#ifndef ACCY_TESTS_REDIS_TEST_SERVER_H_
#define ACCY_TESTS_REDIS_TEST_SERVER_H_

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accy/status.h"
#include "gtest/gtest.h"

namespace accy {

// A TCP port on 127.0.0.1 that nothing listened on a moment ago (bound with port 0, then
// closed), or 0 when no socket could be bound. Another process may take it meanwhile.
inline int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

class RedisTestServer {
 public:
  // Starts redis-server on a free loopback port and waits (at most `ready_within`) until it
  // answers PING. kNotFound when no redis-server is on PATH (or in /usr/bin, /usr/sbin): the
  // caller skips; any other error names the cause and holds the server's log.
  static StatusOr<std::unique_ptr<RedisTestServer>> Start(
      std::chrono::milliseconds ready_within = std::chrono::milliseconds(5000)) {
    const std::string binary = FindBinary();
    if (binary.empty()) {
      return absl::NotFoundError(
          "redis-server is not installed (Debian: apt install redis-server; `make setup` "
          "installs it)");
    }
    std::unique_ptr<RedisTestServer> server(new RedisTestServer());
    std::string log_pattern = ::testing::TempDir() + "accy-redis-log-XXXXXX";
    const int log_fd = mkstemp(log_pattern.data());
    if (log_fd < 0) return absl::InternalError("cannot create the redis-server log file");
    close(log_fd);
    server->log_path_ = log_pattern;
    // A port taken by someone else between FreeLoopbackPort and redis-server's bind makes it
    // exit at once: try again with another port.
    Status last = absl::InternalError("no free loopback port");
    for (int attempt = 0; attempt < 3; ++attempt) {
      const int port = FreeLoopbackPort();
      if (port == 0) continue;
      last = server->Launch(binary, port, ready_within);
      if (last.ok()) return server;
      server->Kill();
    }
    return last;
  }

  ~RedisTestServer() {
    Kill();
    if (!log_path_.empty()) unlink(log_path_.c_str());
  }
  RedisTestServer(const RedisTestServer&) = delete;
  RedisTestServer& operator=(const RedisTestServer&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The GlooOptions::rendezvous / ACCY_RENDEZVOUS value of this server.
  std::string rendezvous() const { return "redis:127.0.0.1:" + std::to_string(port_); }
  // What redis-server printed so far.
  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // SIGKILLs and reaps the server (no-op when already done). May be called from another
  // thread while the test thread uses the server; the destructor calls it again.
  void Kill() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

 private:
  RedisTestServer() = default;

  static std::string FindBinary() {
    std::vector<std::string> folders;
    if (const char* path = std::getenv("PATH")) {
      std::stringstream list(path);
      for (std::string folder; std::getline(list, folder, ':');) {
        if (!folder.empty()) folders.push_back(folder);
      }
    }
    folders.push_back("/usr/bin");
    folders.push_back("/usr/sbin");
    for (const std::string& folder : folders) {
      const std::string candidate = folder + "/redis-server";
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return "";
  }

  // Whether a PING on a fresh connection to the server gets +PONG within 500 ms.
  bool Pong() const {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const timeval limit{0, 500000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port_));
    bool pong = false;
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        send(fd, "PING\r\n", 6, MSG_NOSIGNAL) == 6) {
      char reply[8] = {};
      pong = recv(fd, reply, 7, 0) >= 5 && std::string(reply, 5) == "+PONG";
    }
    close(fd);
    return pong;
  }

  Status Launch(const std::string& binary, int port, std::chrono::milliseconds ready_within) {
    port_ = port;
    const std::string port_text = std::to_string(port);
    // Prepared before fork: the child only calls async-signal-safe functions.
    // No snapshot, no append-only file: nothing written to disk.
    std::vector<std::string> args = {binary,      "--port",      port_text, "--bind",
                                     "127.0.0.1", "--save",      "",        "--appendonly",
                                     "no",        "--daemonize", "no"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t child = fork();
    if (child < 0) return absl::InternalError("cannot fork redis-server");
    if (child == 0) {
      // Never outlive the test process (it may crash or be killed by ctest's timeout).
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      const int log = open(log_path_.c_str(), O_WRONLY | O_APPEND);
      const int null = open("/dev/null", O_RDONLY);
      if (log < 0 || null < 0) _exit(127);
      dup2(null, 0);
      dup2(log, 1);
      dup2(log, 2);
      execv(argv[0], argv.data());
      _exit(127);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pid_ = child;
    }
    const auto deadline = std::chrono::steady_clock::now() + ready_within;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) {
        std::lock_guard<std::mutex> lock(mutex_);
        pid_ = -1;
        return absl::UnavailableError("redis-server on port " + port_text +
                                      " exited at start (status " + std::to_string(status) +
                                      "): " + Log());
      }
      if (Pong()) return absl::OkStatus();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return absl::DeadlineExceededError("redis-server on port " + port_text +
                                       " did not answer PING within " +
                                       std::to_string(ready_within.count()) + " ms: " + Log());
  }

  std::string log_path_;
  int port_ = 0;
  std::mutex mutex_;  // guards pid_ (Kill may come from another thread)
  pid_t pid_ = -1;
};

}  // namespace accy

#endif  // ACCY_TESTS_REDIS_TEST_SERVER_H_
