// The real binary under SIGTERM: before the elector runs it exits at once (start-up may be stuck
// in I/O, and no lock is held yet); once the elector runs, SIGTERM stops it as before.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fakes/temp_dir.h"
#include "test_paths.h"  // LEASEHOLD_BINARY

extern char** environ;

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

using leasehold::testing::TempDir;

// The agent as a child process, stderr into a file.
class Agent {
 public:
  // stderr into `stderr_path`, or onto `stderr_fd` when given.
  Agent(const std::vector<std::string>& flags, const std::string& stderr_path, int stderr_fd = -1)
      : stderr_path_(stderr_path) {
    std::vector<std::string> args = {LEASEHOLD_BINARY};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (stderr_fd >= 0) {
      posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
    } else {
      posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0600);
    }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    // The child starts with an empty mask and default dispositions, like PID 1 in a container.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    REQUIRE(posix_spawn(&pid_, argv[0], &actions, &attr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  ~Agent() {
    if (!status_) {
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
    }
  }

  pid_t pid() const { return pid_; }
  std::string Stderr() const {
    std::ifstream in(stderr_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Polls (the process is not ours to wake) until `pred` holds or `timeout` passes.
  bool WaitFor(const std::function<bool()>& pred, milliseconds timeout) {
    const auto end = steady_clock::now() + timeout;
    while (!pred()) {
      if (steady_clock::now() >= end) return false;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return true;
  }
  bool Exited() {
    if (status_) return true;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
    return status_.has_value();
  }
  int status() const { return *status_; }
  // Until `ready` holds (10 s at most), the agent still running.
  void WaitRunning(const std::function<bool()>& ready) {
    REQUIRE_MESSAGE(WaitFor([&] { return Exited() || ready(); }, milliseconds(10000)), Stderr());
    REQUIRE_FALSE_MESSAGE(Exited(), Stderr());
  }
  // SIGTERM, then a clean exit (status 0) within 5 s; returns its stderr.
  std::string TermCleanly() {
    REQUIRE(::kill(pid_, SIGTERM) == 0);
    REQUIRE_MESSAGE(WaitFor([&] { return Exited(); }, milliseconds(5000)), Stderr());
    CHECK(WIFEXITED(status()));
    CHECK(WEXITSTATUS(status()) == 0);
    return Stderr();
  }

 private:
  pid_t pid_ = -1;
  std::string stderr_path_;
  std::optional<int> status_;
};

// The syscall that thread `tid` of `pid` is blocked in, as /proc/PID/task/TID/syscall starts:
// its number and first argument; -1 when it runs or cannot be read.
std::pair<long, long> BlockedIn(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall");
  std::string nr, arg0;
  if (!(in >> nr >> arg0) || nr == "running") return {-1, -1};
  return {std::strtol(nr.c_str(), nullptr, 10), std::strtol(arg0.c_str(), nullptr, 16)};
}

// The first line of `text` that contains `what`, without its newline; empty if none does.
std::string LineWith(const std::string& text, const std::string& what) {
  const size_t at = text.find(what);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  return text.substr(begin, text.find('\n', at) - begin);
}

TEST_CASE("SIGTERM during start-up: the agent exits within 1 s, even stuck writing its log") {
  TempDir dir;
  // Start-up then blocks for good on its first log line: stderr is a pipe that nobody drains,
  // already full (a container runtime that stopped reading logs). Every file start-up reads is
  // opened without blocking, so this is the hang that is left.
  int pipefd[2];
  REQUIRE(::pipe2(pipefd, O_CLOEXEC) == 0);
  REQUIRE(::fcntl(pipefd[1], F_SETFL, O_NONBLOCK) == 0);
  const std::string chunk(4096, 'x');
  while (::write(pipefd[1], chunk.data(), chunk.size()) > 0) {
  }
  while (::write(pipefd[1], chunk.data(), 1) > 0) {
  }
  REQUIRE(::fcntl(pipefd[1], F_SETFL, 0) == 0);
  Agent agent({"--lock-name=a", "--lock-type=none", "--http-address=127.0.0.1:0"}, "", pipefd[1]);
  ::close(pipefd[1]);
  // The state we count from: the main thread blocked in write(2, ...).
  REQUIRE(agent.WaitFor(
      [&] {
        return agent.Exited() ||
               BlockedIn(agent.pid(), agent.pid()) == std::pair<long, long>{SYS_write, 2};
      },
      milliseconds(10000)));
  REQUIRE_FALSE(agent.Exited());

  const auto sent = steady_clock::now();
  REQUIRE(::kill(agent.pid(), SIGTERM) == 0);
  const bool exited = agent.WaitFor([&] { return agent.Exited(); }, milliseconds(1000));
  const auto took = std::chrono::duration_cast<milliseconds>(steady_clock::now() - sent);
  MESSAGE("exited " << took.count() << " ms after SIGTERM, blocked on a full stderr");
  CHECK_MESSAGE(exited, "still running " << took.count() << " ms after SIGTERM");
  if (exited) {
    CHECK(WIFEXITED(agent.status()));
    CHECK(WEXITSTATUS(agent.status()) == 0);
  }
  ::close(pipefd[0]);
}

TEST_CASE("SIGTERM once the elector runs: it stops the elector and exits cleanly") {
  TempDir dir;
  Agent agent({"--lock-name=a", "--lock-type=none", "--http-address=127.0.0.1:0",
               "--status-file=" + dir.Path("leader.json")},
              dir.Path("stderr"));
  // --lock-type none leads at once; the status file says so after the elector's first step.
  const auto leading = [&] {
    std::ifstream in(dir.Path("leader.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str().find("\"isLeader\":true") != std::string::npos;
  };
  agent.WaitRunning(leading);
  const std::string err = agent.TermCleanly();
  CHECK(err.find(" info received SIGTERM: stopping (release-on-shutdown off)") !=
        std::string::npos);
  CHECK(LineWith(err, "timings: ")
            .find("renew-interval 5.5s; release-on-shutdown off, "
                  "release-holdoff 30s") != std::string::npos);
  CHECK(err.find(" info stopped\n") != std::string::npos);
  CHECK(err.find("during start-up") == std::string::npos);
}

TEST_CASE("SIGTERM in observe mode: the log line says nothing is released") {
  TempDir dir;
  // An API server that is never there (a closed port): the observer keeps retrying, and the
  // listeners and the signal handler are up regardless.
  {
    std::ofstream kc(dir.Path("kubeconfig"));
    kc << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
          "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', "
          "insecure-skip-tls-verify: true}}]\n"
          "users: [{name: u, user: {token: t}}]\n"
          "contexts: [{name: c, context: {cluster: c, user: u, namespace: ops}}]\n";
  }
  Agent agent(
      {"--lock-name=a", "--lock-type=leases", "--agent-mode=observe", "--observe-identity=exact",
       "--identity=op-0_1", "--http-address=127.0.0.1:0", "--kubeconfig=" + dir.Path("kubeconfig")},
      dir.Path("stderr"));
  agent.WaitRunning(
      [&] { return agent.Stderr().find("local API listening") != std::string::npos; });
  const std::string err = agent.TermCleanly();
  CHECK_MESSAGE(err.find(" info received SIGTERM: stopping (observe mode: stops answering "
                         "\"yes\" and watching the lock; it never wrote the lock, so nothing is "
                         "released: the operator that holds it does that)") != std::string::npos,
                err);
  // Neither the start-up timings nor the signal's line name settings an observer never uses.
  for (const char* line : {"timings: ", "received SIGTERM"}) {
    CAPTURE(line);
    const std::string got = LineWith(err, line);
    REQUIRE_FALSE(got.empty());
    CHECK(got.find("release-on-shutdown") == std::string::npos);
    CHECK(got.find("renew-interval") == std::string::npos);
  }
  CHECK(LineWith(err, "timings: ").find("observe mode: no renew, no release") != std::string::npos);
}

}  // namespace
