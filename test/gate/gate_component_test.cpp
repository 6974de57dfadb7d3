// The real `leasehold gate` process against a fake sidecar: a small HTTP/1.0 server on
// 127.0.0.1 port 0 in this test (GET /leader, GET /leader/watch as Server-Sent Events, POST
// /release), never the real listener. CMD is a /bin/sh script that leaves its traces in files.
//
// Time is real here (the gate's timers are a CLOCK_BOOTTIME timerfd), so every wait waits for
// the state it counts from (the status file, a trace file, the exit), and every bound on time
// compares instants: CMD's end against the validUntil sent, never a sleep's length.
#include <arpa/inet.h>
#include <dirent.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fakes/loopback_listener.h"
#include "test_paths.h"  // LEASEHOLD_BINARY

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::system_clock;

int64_t BootMs() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int64_t WallMs() {
  return std::chrono::duration_cast<milliseconds>(Clock::now().time_since_epoch()).count();
}

std::string Rfc3339(int64_t wall_ms) {
  const time_t secs = static_cast<time_t>(wall_ms / 1000);
  tm utc{};
  gmtime_r(&secs, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(wall_ms % 1000));
  return buf;
}

// The /leader JSON: a yes valid until `valid_until_wall_ms` (0: a no).
// interval_ms > 0 adds "renewIntervalMs" (a sidecar of this version; older ones send none).
std::string LeaderJson(bool leader, int64_t term, int64_t valid_until_wall_ms = 0,
                       int renew_ms = 10000, int retry_ms = 2000, int interval_ms = 0) {
  std::string j = std::string("{\"isLeader\":") + (leader ? "true" : "false") +
                  ",\"term\":" + std::to_string(term);
  if (leader) j += ",\"validUntil\":\"" + Rfc3339(valid_until_wall_ms) + "\"";
  if (renew_ms > 0) {
    j += ",\"timings\":{\"leaseDurationMs\":15000,\"renewDeadlineMs\":" + std::to_string(renew_ms) +
         ",\"retryPeriodMs\":" + std::to_string(retry_ms);
    if (interval_ms > 0) j += ",\"renewIntervalMs\":" + std::to_string(interval_ms);
    j += "}";
  }
  return j + "}";
}

// `json` (an object) with one more member first, e.g. R"("termReliable":true)".
std::string WithMember(const std::string& json, const std::string& member) {
  return "{" + member + "," + json.substr(1);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool WaitFor(const std::function<bool()>& pred, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return pred();
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The sidecar's local API as far as the gate uses it.
class FakeSidecar {
 public:
  explicit FakeSidecar(int port = 0) {
    const leasehold::testing::LoopbackSocket s = leasehold::testing::ListenOnLoopback(port);
    REQUIRE(s.fd >= 0);
    fd_ = s.fd;
    port_ = s.port;
    thread_ = std::thread([this] { Accept(); });
  }
  ~FakeSidecar() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    for (std::thread& t : conns_) t.join();
    DropStreams();
  }
  int port() const { return port_; }

  void SetLeader(const std::string& json, int status = 200) {
    std::lock_guard<std::mutex> l(mu_);
    leader_ = json;
    leader_status_ = status;
  }
  void SetWatchStatus(int status) {
    std::lock_guard<std::mutex> l(mu_);
    watch_status_ = status;
  }
  // One event to every open stream.
  void Push(const std::string& json) {
    std::lock_guard<std::mutex> l(mu_);
    leader_ = json;
    for (int fd : streams_) WriteAll(fd, "event: leader\ndata: " + json + "\n\n");
  }
  void DropStreams() {
    std::lock_guard<std::mutex> l(mu_);
    for (int fd : streams_) {
      shutdown(fd, SHUT_RDWR);
      close(fd);
    }
    streams_.clear();
  }
  int streams() {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<int>(streams_.size());
  }
  int releases() {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<int>(release_boot_ms_.size());
  }
  std::vector<int64_t> release_boot_ms() {
    std::lock_guard<std::mutex> l(mu_);
    return release_boot_ms_;
  }
  // Every request so far, in order: "GET /leader", "POST /release", ...
  std::vector<std::string> paths() {
    std::lock_guard<std::mutex> l(mu_);
    return paths_;
  }
  int requests(const std::string& path) {
    std::lock_guard<std::mutex> l(mu_);
    int n = 0;
    for (const std::string& p : paths_) n += p == path;
    return n;
  }

 private:
  void Accept() {
    while (!stop_) {
      const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) {
        if (stop_) return;
        continue;
      }
      std::lock_guard<std::mutex> l(mu_);
      conns_.emplace_back([this, c] { Serve(c); });
    }
  }
  void Serve(int c) {
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = recv(c, buf, sizeof buf, 0);
      if (n <= 0) {
        close(c);
        return;
      }
      head.append(buf, static_cast<size_t>(n));
    }
    const std::string line = head.substr(0, head.find("\r\n"));
    const std::string method = line.substr(0, line.find(' '));
    const std::string path =
        line.substr(method.size() + 1, line.find(' ', method.size() + 1) - method.size() - 1);
    std::unique_lock<std::mutex> l(mu_);
    paths_.push_back(method + " " + path);
    if (method == "GET" && path == "/leader/watch" && watch_status_ == 200) {
      WriteAll(c, "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
      WriteAll(c, "event: leader\ndata: " + leader_ + "\n\n");
      streams_.push_back(c);
      return;
    }
    int status = 404;
    std::string body = "{}";
    if (method == "GET" && path == "/leader") {
      status = leader_status_;
      body = leader_;
    } else if (method == "GET" && path == "/leader/watch") {
      status = watch_status_;
    } else if (method == "POST" && path == "/release") {
      status = 202;
      release_boot_ms_.push_back(BootMs());
    }
    l.unlock();
    WriteAll(c, "HTTP/1.0 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\n" +
                    "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    close(c);
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::thread> conns_;
  std::vector<int> streams_;
  std::string leader_ = LeaderJson(false, 0);
  int leader_status_ = 200;
  int watch_status_ = 200;
  std::vector<int64_t> release_boot_ms_;
  std::vector<std::string> paths_;
};

// A temporary directory for one case: CMD's traces, the gate's log and status file.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/leasehold-gate-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + path).c_str()); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// One `leasehold gate` process.
class Gate {
 public:
  Gate(const TempDir& dir, int port, const std::string& script,
       std::vector<std::string> flags = {"--stop-grace", "500ms"},
       std::vector<std::string> wrap = {})
      : dir_(dir) {
    std::vector<std::string> argv = wrap;
    argv.insert(argv.end(),
                {LEASEHOLD_BINARY, "gate", "--address", "127.0.0.1:" + std::to_string(port),
                 "--status-file", dir / "status.json", "--log-level", "debug"});
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "/bin/sh", "-c", script});
    const std::string log = dir / "gate.log";
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> args;
      for (std::string& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(126);
    }
  }
  ~Gate() {
    if (pid_ > 0 && !status_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  std::string Log() const { return ReadFile(dir_ / "gate.log"); }
  std::string Status() const { return ReadFile(dir_ / "status.json"); }
  bool InState(const std::string& state) const {
    return Status().find("\"state\":\"" + state + "\"") != std::string::npos;
  }
  // When the status file says the current state began (CLOCK_BOOTTIME ms).
  int64_t StateSinceMs() const {
    const std::string s = Status();
    const size_t at = s.find("\"stateSinceMs\":");
    return at == std::string::npos ? 0 : std::atoll(s.c_str() + at + 15);
  }
  // The exit code, or nullopt if it did not exit in time.
  std::optional<int> Wait(milliseconds timeout) {
    WaitFor(
        [&] {
          int st = 0;
          if (!status_ && waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
          return status_.has_value();
        },
        timeout);
    if (!status_) return std::nullopt;
    return WIFEXITED(*status_) ? WEXITSTATUS(*status_) : 128 + WTERMSIG(*status_);
  }
  bool alive() {
    int st = 0;
    if (!status_ && waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
    return !status_;
  }

 private:
  const TempDir& dir_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

bool ProcessGone(pid_t pid) {
  // Gone, or a zombie nobody reaped yet (state Z): either way it runs no more code.
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

pid_t ReadPid(const std::string& path) {
  return static_cast<pid_t>(std::atoi(ReadFile(path).c_str()));
}

// The traces a script leaves: its pid in `pid`, LEASEHOLD_TERM in `term`, and on SIGTERM the
// wall-clock ms in `got-term`. `date +%s%3N` is GNU date's milliseconds.
const std::string kTrace = "echo $$ > pid.tmp && mv pid.tmp pid; echo $LEASEHOLD_TERM > term; ";

std::string InDir(const TempDir& d, const std::string& script) {
  return "cd " + d.path + " && " + script;
}

TEST_CASE("gate: starts CMD when the pod leads, with LEASEHOLD_TERM") {
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
  Gate g(d, side.port(), InDir(d, kTrace + "exec sleep 60"));
  REQUIRE(
      WaitFor([&] { return g.InState("running") && !ReadFile(d / "term").empty(); }, seconds(5)));
  CHECK(ReadFile(d / "term") == "4\n");
  CHECK(side.requests("GET /leader") >= 1);  // the timings, first
  REQUIRE(WaitFor([&] { return side.streams() == 1; }, seconds(5)));
  CHECK(g.Log().find("waiting -> starting") != std::string::npos);
  CHECK(g.Log().find("starting -> running") != std::string::npos);
}

TEST_CASE("gate: a follower's CMD never starts") {
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(false, 4));
  Gate g(d, side.port(), InDir(d, kTrace + "exec sleep 60"));
  REQUIRE(WaitFor([&] { return side.streams() == 1; }, seconds(5)));
  // Then a yes that is already too close to its validUntil to run CMD at all (grace 500 ms +
  // margin 250 ms): the gate counts only what is left of it.
  side.Push(LeaderJson(true, 4, WallMs() + 600));
  side.Push(LeaderJson(false, 4));
  const auto events = [&] {
    const std::string log = g.Log();
    size_t n = 0;
    for (size_t at = log.find("gate: event:"); at != std::string::npos;
         at = log.find("gate: event:", at + 1)) {
      ++n;
    }
    return n;
  };
  REQUIRE(WaitFor([&] { return events() == 3; }, seconds(5)));
  CHECK(g.InState("waiting"));
  CHECK(ReadFile(d / "pid").empty());
}

TEST_CASE("gate: no event arrives: stop signal at validUntil - grace, done before validUntil") {
  FakeSidecar side;
  TempDir d;
  const int64_t valid_until = WallMs() + 2500;
  const int64_t valid_until_boot = BootMs() + (valid_until - WallMs());
  side.SetLeader(LeaderJson(true, 4, valid_until));
  Gate g(d, side.port(),
         InDir(d, "trap 'date +%s%3N > got-term; exit 0' TERM; " + kTrace +
                      "while :; do sleep 0.02; done"));
  REQUIRE(WaitFor([&] { return g.InState("running") && ReadPid(d / "pid") > 0; }, seconds(5)));
  // No event after the first: the clock alone stops CMD.
  REQUIRE(WaitFor([&] { return g.InState("waiting") && !ReadFile(d / "got-term").empty(); },
                  seconds(5)));
  const int64_t got_term = std::atoll(ReadFile(d / "got-term").c_str());
  MESSAGE("SIGTERM " << valid_until - got_term << " ms before validUntil; CMD gone "
                     << valid_until_boot - g.StateSinceMs() << " ms before it");
  // Sent at validUntil - 500 ms - 250 ms; the trap runs once sleep 0.02 returns. Not early.
  CHECK(got_term >= valid_until - 750 - 2);  // validUntil has ms resolution
  CHECK(got_term < valid_until - 250);
  CHECK(g.StateSinceMs() < valid_until_boot);
  CHECK(g.Log().find("no fresh validUntil") != std::string::npos);
}

TEST_CASE("gate: a child that ignores SIGTERM gets SIGKILL before validUntil") {
  FakeSidecar side;
  TempDir d;
  const int64_t valid_until = WallMs() + 2500;
  const int64_t valid_until_boot = BootMs() + (valid_until - WallMs());
  side.SetLeader(LeaderJson(true, 4, valid_until));
  Gate g(d, side.port(), InDir(d, "trap '' TERM; " + kTrace + "while :; do sleep 0.02; done"));
  REQUIRE(WaitFor([&] { return g.InState("running") && ReadPid(d / "pid") > 0; }, seconds(5)));
  const pid_t child = ReadPid(d / "pid");
  REQUIRE(WaitFor([&] { return g.InState("waiting"); }, seconds(5)));
  CHECK(ProcessGone(child));
  const int64_t gone = g.StateSinceMs();
  MESSAGE("CMD reaped " << valid_until_boot - gone << " ms before validUntil");
  CHECK(gone < valid_until_boot);
  // SIGKILL at validUntil - 250 ms, not before validUntil - grace.
  CHECK(gone >= valid_until_boot - 750);
  CHECK(g.Log().find("CMD (pid " + std::to_string(child) + ") exited with code 137") !=
        std::string::npos);
}

TEST_CASE("gate: the stream dropped stops CMD at once") {
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
  Gate g(d, side.port(),
         InDir(d, "trap 'date +%s%3N > got-term; exit 0' TERM; " + kTrace +
                      "while :; do sleep 0.02; done"));
  REQUIRE(
      WaitFor([&] { return g.InState("running") && side.streams() == 1 && ReadPid(d / "pid") > 0; },
              seconds(5)));
  // The sidecar now answers no on reconnect, so that CMD does not start again.
  side.SetLeader(LeaderJson(false, 4));
  const int64_t dropped = WallMs();
  side.DropStreams();
  REQUIRE(WaitFor([&] { return !ReadFile(d / "got-term").empty(); }, seconds(5)));
  const int64_t after = std::atoll(ReadFile(d / "got-term").c_str()) - dropped;
  MESSAGE("SIGTERM " << after << " ms after the stream dropped");
  CHECK(after < 1000);  // validUntil was 10 s away
  REQUIRE(WaitFor([&] { return g.InState("waiting"); }, seconds(5)));
  CHECK(g.Log().find("watch stream ended") != std::string::npos);
}

TEST_CASE("gate: a no event stops CMD at once, SIGKILL after the grace") {
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
  Gate g(d, side.port(), InDir(d, "trap '' TERM; " + kTrace + "while :; do sleep 0.02; done"));
  REQUIRE(
      WaitFor([&] { return g.InState("running") && side.streams() == 1 && ReadPid(d / "pid") > 0; },
              seconds(5)));
  const int64_t no_at = BootMs();
  side.Push(LeaderJson(false, 4));
  REQUIRE(WaitFor([&] { return g.InState("waiting"); }, seconds(5)));
  const int64_t gone = g.StateSinceMs() - no_at;
  MESSAGE("CMD (ignoring SIGTERM) gone " << gone << " ms after the no");
  CHECK(gone >= 500);  // the grace
  CHECK(gone < 3000);  // not the validUntil 10 s away
}

// utime + stime of a process, in clock ticks.
long CpuTicks(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream in(stat.substr(paren + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::atol(field.c_str());
    if (i == 15) stime = std::atol(field.c_str());
  }
  return utime + stime;
}

TEST_CASE("gate: idle between events, with or without a status file") {
  for (const char* status_file : {"off", ""}) {
    CAPTURE(status_file);
    FakeSidecar side;
    TempDir d;
    side.SetLeader(LeaderJson(false, 4));
    std::vector<std::string> flags = {"--stop-grace", "500ms"};
    if (*status_file) flags.insert(flags.end(), {"--status-file", status_file});
    Gate g(d, side.port(), InDir(d, kTrace + "exec sleep 60"), flags);
    REQUIRE(WaitFor([&] { return side.streams() == 1; }, seconds(5)));
    const long before = CpuTicks(g.pid());
    const auto t0 = std::chrono::steady_clock::now();
    // Measured over at least one heartbeat (1 s): a loop that spins would use all of it.
    WaitFor([&] { return std::chrono::steady_clock::now() - t0 >= milliseconds(1200); },
            seconds(2));
    const long used = CpuTicks(g.pid()) - before;
    MESSAGE("CPU ticks over 1.2 s: " << used);
    CHECK(used < sysconf(_SC_CLK_TCK) / 10);  // < 100 ms of CPU
    CHECK(g.alive());
  }
}

TEST_CASE("gate: the sidecar not reachable at start: waits, logs once, never exits") {
  TempDir d;
  int port = 0;
  {
    FakeSidecar probe;  // a free port, closed again at once
    port = probe.port();
  }
  Gate g(d, port, InDir(d, kTrace + "exec sleep 60"));
  // Several refused attempts (the backoff starts at 50 ms).
  REQUIRE(WaitFor([&] { return g.Status().find("unreachable") != std::string::npos; }, seconds(5)));
  REQUIRE(
      WaitFor([&] { return g.Log().find("Connection refused") != std::string::npos; }, seconds(5)));
  FakeSidecar side(port);
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
  REQUIRE(WaitFor([&] { return g.InState("running"); }, seconds(5)));
  CHECK(g.alive());
  const std::string log = g.Log();
  size_t infos = 0;
  for (size_t at = log.find("retrying with backoff"); at != std::string::npos;
       at = log.find("retrying with backoff", at + 1)) {
    ++infos;
  }
  CHECK(infos == 1);
  CHECK(log.find("the sidecar answers again") != std::string::npos);
}

TEST_CASE("gate: a 503 before the lock was read means wait") {
  FakeSidecar side;
  TempDir d;
  side.SetLeader(
      R"({"isLeader":false,"term":0,"reason":"the lock has not been read yet","timings":)"
      R"({"leaseDurationMs":15000,"renewDeadlineMs":10000,"retryPeriodMs":2000}})",
      503);
  Gate g(d, side.port(), InDir(d, kTrace + "exec sleep 60"));
  REQUIRE(WaitFor([&] { return side.streams() == 1; }, seconds(5)));
  CHECK(g.InState("waiting"));
  side.Push(LeaderJson(true, 1, WallMs() + 10000));
  REQUIRE(WaitFor([&] { return g.InState("running"); }, seconds(5)));
}

TEST_CASE("gate: a stop-grace too long for the sidecar's timings: exit 2, CMD never runs") {
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(true, 4, WallMs() + 3000, /*renew_ms=*/3000, /*retry_ms=*/1000));
  Gate g(d, side.port(), InDir(d, kTrace + "exec sleep 60"), {"--stop-grace", "800ms"});
  REQUIRE(g.Wait(seconds(5)) == std::optional<int>(2));
  CHECK(ReadFile(d / "pid").empty());
  CHECK(g.Log().find("--stop-grace 800ms is too long") != std::string::npos);
  CHECK(side.releases() == 0);
}

TEST_CASE("gate: a sidecar renewing at a longer interval: a 3s stop-grace exits 2") {
  // The sidecar's defaults with --renew-interval auto (5.5 s): a fresh validUntil lies only
  // renew-deadline - 5.5 s ahead, too little for the default 3 s stop-grace.
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000, 10000, 2000, /*interval_ms=*/5500));
  Gate g(d, side.port(), InDir(d, kTrace + "exec sleep 60"), {"--stop-grace", "3s"});
  REQUIRE(g.Wait(seconds(5)) == std::optional<int>(2));
  CHECK(ReadFile(d / "pid").empty());
  CHECK(g.Log().find("renew-deadline - renew-interval (10000ms - 5500ms)") != std::string::npos);
  CHECK(g.Log().find("--renew-interval=retry-period") != std::string::npos);
  CHECK(side.releases() == 0);
}

TEST_CASE("gate: the watch stream refused (503): polls GET /leader and still gates") {
  FakeSidecar side;
  TempDir d;
  side.SetWatchStatus(503);
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
  Gate g(d, side.port(), InDir(d, "trap 'exit 0' TERM; " + kTrace + "while :; do sleep 0.02; done"),
         {"--stop-grace", "500ms", "--poll-interval", "50ms"});
  REQUIRE(WaitFor([&] { return g.InState("running"); }, seconds(5)));
  REQUIRE(WaitFor([&] { return side.requests("GET /leader") >= 4; }, seconds(5)));
  CHECK(g.Status().find("\"sidecar\":\"polling\"") != std::string::npos);
  side.SetLeader(LeaderJson(false, 4));
  REQUIRE(WaitFor([&] { return g.InState("waiting"); }, seconds(5)));
}

TEST_CASE("gate: SIGTERM stops CMD, then POST /release, then exits with CMD's code") {
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
  Gate g(d, side.port(),
         InDir(d, "trap 'sleep 0.2; date +%s%3N > got-term; exit 7' TERM; " + kTrace +
                      "while :; do sleep 0.02; done"));
  REQUIRE(WaitFor([&] { return g.InState("running") && ReadPid(d / "pid") > 0; }, seconds(5)));
  kill(g.pid(), SIGTERM);
  REQUIRE(g.Wait(seconds(5)) == std::optional<int>(7));
  REQUIRE(side.releases() == 1);
  // The release came after CMD's last act.
  const int64_t cmd_done_wall = std::atoll(ReadFile(d / "got-term").c_str());
  const int64_t release_wall = side.release_boot_ms()[0] - BootMs() + WallMs();
  CHECK(release_wall >= cmd_done_wall);
  CHECK(g.Log().find("received SIGTERM: shutting down") != std::string::npos);
}

TEST_CASE("gate: CMD exiting by itself: POST /release, its code or 128 + n") {
  struct Case {
    const char* name;
    const char* script;
    int code;
  };
  const std::vector<Case> cases = {
      {"exit 5", "exit 5", 5},
      {"exit 0", "exit 0", 0},
      {"killed by SIGKILL", "kill -9 $$", 137},
      {"not found: 127", "exec /nonexistent/cmd", 127},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      FakeSidecar side;
      TempDir d;
      side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
      Gate g(d, side.port(), InDir(d, kTrace + "sleep 0.1; " + c.script));
      REQUIRE(g.Wait(seconds(5)) == std::optional<int>(c.code));
      CHECK(side.releases() == 1);
      CHECK(g.Log().find("CMD exited by itself with code " + std::to_string(c.code)) !=
            std::string::npos);
    }
  }
}

TEST_CASE("gate: SIGHUP, SIGUSR1 and SIGUSR2 are forwarded to CMD") {
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
  Gate g(d, side.port(),
         InDir(d, kTrace + "trap 'echo HUP >> got' HUP; trap 'echo USR1 >> got' USR1; "
                           "trap 'echo USR2 >> got' USR2; echo ready > ready; "
                           "while :; do sleep 0.02; done"));
  REQUIRE(
      WaitFor([&] { return g.InState("running") && !ReadFile(d / "ready").empty(); }, seconds(5)));
  for (int s : {SIGHUP, SIGUSR1, SIGUSR2}) {
    const size_t before = ReadFile(d / "got").size();
    kill(g.pid(), s);
    REQUIRE(WaitFor([&] { return ReadFile(d / "got").size() > before; }, seconds(5)));
  }
  CHECK(ReadFile(d / "got") == "HUP\nUSR1\nUSR2\n");
  CHECK(g.alive());
  CHECK(g.InState("running"));
}

// Zombies of this gate (processes whose parent it is, in state Z), from /proc.
int ZombiesOf(pid_t parent) {
  int n = 0;
  DIR* dir = opendir("/proc");
  if (!dir) return -1;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    const std::string stat = ReadFile(std::string("/proc/") + e->d_name + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %d", &state, &ppid) == 2 && ppid == parent &&
        state == 'Z') {
      ++n;
    }
  }
  closedir(dir);
  return n;
}

// The first child of `parent`, from /proc (0 if none).
pid_t ChildOf(pid_t parent) {
  DIR* dir = opendir("/proc");
  pid_t found = 0;
  while (dir && !found) {
    dirent* e = readdir(dir);
    if (!e) break;
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    const std::string stat = ReadFile(std::string("/proc/") + e->d_name + "/stat");
    const size_t paren = stat.rfind(')');
    char state = 0;
    int ppid = 0;
    if (paren != std::string::npos &&
        std::sscanf(stat.c_str() + paren + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
      found = std::atoi(e->d_name);
    }
  }
  if (dir) closedir(dir);
  return found;
}

bool CanUnsharePid() {
  return std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") == 0;
}

TEST_CASE("gate: as PID 1, orphans are reaped (a child that forks and exits)") {
  const bool pid1 = CanUnsharePid();
  if (!pid1) MESSAGE("unshare --pid unavailable: the gate runs as child subreaper, not PID 1");
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
  // Ten orphans: each grandchild outlives its parent (re-parented to the gate) and then exits.
  const std::string script = kTrace +
                             "echo $PPID > gate-pid; "
                             "for i in 1 2 3 4 5 6 7 8 9 10; do (sleep 0.05 & exit 0); done; "
                             "sleep 0.3; echo done > orphans-done; exec sleep 60";
  std::vector<std::string> wrap;
  if (pid1) wrap = {"unshare", "--pid", "--fork", "--mount-proc"};
  Gate g(d, side.port(), InDir(d, script), {"--stop-grace", "500ms"}, wrap);
  REQUIRE(WaitFor([&] { return !ReadFile(d / "orphans-done").empty(); }, seconds(5)));
  if (pid1) CHECK(ReadFile(d / "gate-pid") == "1\n");
  // The gate as seen from here: the unshare child when wrapped.
  pid_t gate_pid = g.pid();
  if (pid1) gate_pid = ChildOf(g.pid());
  REQUIRE(gate_pid > 0);
  REQUIRE(WaitFor([&] { return ZombiesOf(gate_pid) == 0; }, seconds(5)));
  CHECK(g.Log().find("reaped") != std::string::npos);
  kill(gate_pid, SIGTERM);
  CHECK(g.Wait(seconds(5)) == std::optional<int>(128 + SIGTERM));
}

TEST_CASE("gate: a descendant that called setsid is stopped too") {
  FakeSidecar side;
  TempDir d;
  side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
  // The daemon leaves CMD's process group and ignores SIGTERM; CMD itself exits on SIGTERM.
  const std::string script =
      kTrace +
      "setsid sh -c 'echo $$ > daemon.tmp; mv daemon.tmp daemon; trap \"\" TERM; "
      "while :; do sleep 0.02; done' & "
      "trap 'exit 0' TERM; while :; do sleep 0.02; done";
  // (the pid file comes last here: the daemon file is waited for, and written after the trap)
  Gate g(d, side.port(), InDir(d, script));
  REQUIRE(WaitFor([&] { return g.InState("running") && ReadPid(d / "daemon") > 0; }, seconds(5)));
  const pid_t daemon = ReadPid(d / "daemon");
  CHECK(getpgid(daemon) != getpgid(ReadPid(d / "pid")));
  side.Push(LeaderJson(false, 4));
  REQUIRE(WaitFor([&] { return g.InState("waiting"); }, seconds(5)));
  CHECK(ProcessGone(daemon));
}

TEST_CASE("gate: LEASEHOLD_TERM_RELIABLE from the view that started CMD") {
  struct Case {
    const char* name;
    std::string member;  // added to the /leader JSON; empty: none (an older sidecar)
    const char* want;
  };
  const std::vector<Case> cases = {
      {"termReliable true", R"("termReliable":true)", "7 true\n"},
      {"termReliable false, with its reason",
       R"("termReliable":false,"termReason":"a writer that does not count transitions")",
       "7 false\n"},
      {"absent (an older sidecar): false", "", "7 false\n"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      FakeSidecar side;
      TempDir d;
      const std::string yes = LeaderJson(true, 7, WallMs() + 10000);
      side.SetLeader(c.member.empty() ? yes : WithMember(yes, c.member));
      // The gate's own environment has a value: CMD must see the view's, never that one.
      Gate g(d, side.port(),
             InDir(d,
                   "echo $LEASEHOLD_TERM $LEASEHOLD_TERM_RELIABLE > env.tmp && mv env.tmp env; "
                   "exec sleep 60"),
             {"--stop-grace", "500ms"}, {"env", "LEASEHOLD_TERM_RELIABLE=inherited"});
      REQUIRE(WaitFor([&] { return g.InState("running") && !ReadFile(d / "env").empty(); },
                      seconds(5)));
      CHECK(ReadFile(d / "env") == c.want);
      CHECK(g.Log().find(std::string("LEASEHOLD_TERM_RELIABLE=") +
                         (std::string(c.want) == "7 true\n" ? "true" : "false")) !=
            std::string::npos);
    }
  }
}

// The sidecar container can restart alone with other flags while the gate runs on: timings
// (renew-deadline, retry-period) come only with GET /leader, at start, after a lost stream, and
// on every poll. With --stop-grace 500ms, 10s/2s (the default here) and 6s/1s fit, 2s/1s does not
// ((2s - 1s) / 2 - 250ms = 250ms < 500ms).
struct TimingsCase {
  const char* name;
  int watch_status;  // 200: the stream, dropped to make the gate ask again; 503: polling
};
const std::vector<TimingsCase> kTimingsCases = {
    {"after the stream dropped", 200},
    {"while polling", 503},
};

// Waits until CMD runs (and, when the case streams, the stream is up): CMD's pid.
pid_t WaitRunning(Gate& g, FakeSidecar& side, TempDir& d, const TimingsCase& c) {
  REQUIRE(WaitFor(
      [&] {
        return g.InState("running") && ReadPid(d / "pid") > 0 &&
               (c.watch_status != 200 || side.streams() == 1);
      },
      seconds(5)));
  return ReadPid(d / "pid");
}

TEST_CASE(
    "gate: the sidecar's timings change so that stop-grace no longer fits: CMD stopped, "
    "POST /release, exit 2") {
  for (const TimingsCase& c : kTimingsCases) {
    SUBCASE(c.name) {
      FakeSidecar side;
      TempDir d;
      side.SetWatchStatus(c.watch_status);
      side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
      Gate g(d, side.port(),
             InDir(d, "trap 'date +%s%3N > got-term; exit 0' TERM; " + kTrace +
                          "while :; do sleep 0.02; done"),
             {"--stop-grace", "500ms", "--poll-interval", "50ms"});
      const pid_t child = WaitRunning(g, side, d, c);
      // Still a yes, 10 s ahead: only the timings stop CMD.
      side.SetLeader(LeaderJson(true, 4, WallMs() + 10000, /*renew_ms=*/2000, /*retry_ms=*/1000));
      if (c.watch_status == 200) side.DropStreams();
      REQUIRE(g.Wait(seconds(5)) == std::optional<int>(2));
      CHECK(ProcessGone(child));
      REQUIRE(!ReadFile(d / "got-term").empty());
      const std::vector<std::string> paths = side.paths();
      if (c.watch_status == 200) {
        CHECK(paths == std::vector<std::string>{"GET /leader", "GET /leader/watch", "GET /leader",
                                                "POST /release"});
      } else {
        // The first check, the refused stream, polls until the new timings, then the release.
        REQUIRE(paths.size() >= 4);
        CHECK(paths[0] == "GET /leader");
        CHECK(paths[1] == "GET /leader/watch");
        for (size_t i = 2; i + 1 < paths.size(); ++i) CHECK(paths[i] == "GET /leader");
        CHECK(paths.back() == "POST /release");
      }
      // The release came after CMD's last act.
      REQUIRE(side.releases() == 1);
      const int64_t cmd_done_wall = std::atoll(ReadFile(d / "got-term").c_str());
      const int64_t release_wall = side.release_boot_ms()[0] - BootMs() + WallMs();
      CHECK(release_wall >= cmd_done_wall);
      const std::string log = g.Log();
      CHECK(Count(log, "waiting -> starting") == 1);  // never started again
      CHECK(Count(log, "--stop-grace 500ms is too long") == 1);
      CHECK(log.find("sidecar timings changed to lease-duration 15000ms, renew-deadline 2000ms, "
                     "retry-period 1000ms") != std::string::npos);
    }
  }
}

TEST_CASE("gate: the sidecar's timings change and stop-grace still fits: the gate carries on") {
  for (const TimingsCase& c : kTimingsCases) {
    SUBCASE(c.name) {
      FakeSidecar side;
      TempDir d;
      side.SetWatchStatus(c.watch_status);
      side.SetLeader(LeaderJson(true, 4, WallMs() + 10000));
      Gate g(d, side.port(),
             InDir(d, "trap 'exit 0' TERM; " + kTrace + "while :; do sleep 0.02; done"),
             {"--stop-grace", "500ms", "--poll-interval", "50ms"});
      const pid_t child = WaitRunning(g, side, d, c);
      side.SetLeader(LeaderJson(true, 4, WallMs() + 10000, /*renew_ms=*/6000, /*retry_ms=*/1000));
      if (c.watch_status == 200) side.DropStreams();
      const std::string fits =
          "sidecar timings changed to lease-duration 15000ms, renew-deadline 6000ms, "
          "retry-period 1000ms, renews every 1000ms (the sidecar restarted?): stop-grace 500ms "
          "fits";
      REQUIRE(WaitFor([&] { return g.Log().find(fits) != std::string::npos; }, seconds(5)));
      if (c.watch_status == 200) {
        // The lost stream alone stops CMD (as always); the yes on the new stream starts it again.
        REQUIRE(WaitFor(
            [&] {
              return side.streams() == 1 && g.InState("running") && ReadPid(d / "pid") != child;
            },
            seconds(5)));
        const std::vector<std::string> paths = side.paths();
        CHECK(paths == std::vector<std::string>{"GET /leader", "GET /leader/watch", "GET /leader",
                                                "GET /leader/watch"});
      } else {
        // Three more polls, all answered with the same timings: CMD runs on, the line once.
        const int polls = side.requests("GET /leader");
        REQUIRE(WaitFor([&] { return side.requests("GET /leader") >= polls + 3; }, seconds(5)));
        CHECK(g.InState("running"));
        CHECK(ReadPid(d / "pid") == child);
        CHECK_FALSE(ProcessGone(child));
        CHECK(Count(g.Log(), "waiting -> starting") == 1);
      }
      CHECK(g.alive());
      CHECK(Count(g.Log(), "sidecar timings changed") == 1);
      CHECK(side.releases() == 0);
    }
  }
}

}  // namespace
