// `leasehold probe`: argument parsing (pure) and exit codes against a local server on port 0.
#include "app/probe.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "fakes/fake_environment.h"
#include "fakes/hostile_peer.h"
#include "fakes/loopback_listener.h"

namespace leasehold::app {
namespace {

using Strings = std::vector<std::string>;
using Targets = std::vector<std::pair<std::string, int>>;

Environment EnvWith(std::map<std::string, std::string> vars) {
  return testing::FakeEnvironment(std::move(vars));
}

TEST_CASE("ParseProbeCommand") {
  struct Case {
    const char* name;
    Strings args;
    std::map<std::string, std::string> vars;
    std::string path;
    Targets targets;
  };
  const std::vector<Case> cases = {
      {"defaults: /readyz on localhost:4040, IPv4 first",
       {},
       {},
       "/readyz",
       {{"127.0.0.1", 4040}, {"::1", 4040}}},
      {"--leader asks /is-leader",
       {"--leader"},
       {},
       "/is-leader",
       {{"127.0.0.1", 4040}, {"::1", 4040}}},
      {"--address=", {"--address=127.0.0.1:9000"}, {}, "/readyz", {{"127.0.0.1", 9000}}},
      {"--address VALUE",
       {"--leader", "--address", "[::1]:9000"},
       {},
       "/is-leader",
       {{"::1", 9000}}},
      {"a wildcard is asked on loopback",
       {"--address=:9000"},
       {},
       "/readyz",
       {{"127.0.0.1", 9000}}},
      {"an IPv6 wildcard too", {"--address=[::]:9000"}, {}, "/readyz", {{"::1", 9000}}},
      {"the agent's LEASEHOLD_HTTP_ADDRESS",
       {},
       {{"LEASEHOLD_HTTP_ADDRESS", "127.0.0.1:7000"}},
       "/readyz",
       {{"127.0.0.1", 7000}}},
      {"--address wins over LEASEHOLD_HTTP_ADDRESS",
       {"--address=127.0.0.1:9000"},
       {{"LEASEHOLD_HTTP_ADDRESS", "127.0.0.1:7000"}},
       "/readyz",
       {{"127.0.0.1", 9000}}},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseProbeCommand(c.args, EnvWith(c.vars));
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      CHECK(r->output.empty());
      CHECK(r->path == c.path);
      CHECK(r->targets == c.targets);
    }
  }
}

TEST_CASE("ParseProbeCommand: errors name the flag; --help prints") {
  struct Case {
    const char* name;
    Strings args;
    std::map<std::string, std::string> vars;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"unknown argument",
       {"--bogus"},
       {},
       "unknown flag \"--bogus\" (see leasehold probe --help)"},
      {"--address without a value",
       {"--address"},
       {},
       "--address: needs a value (see leasehold probe --help)"},
      {"bad address",
       {"--address=example.com:80"},
       {},
       "--address: \"example.com:80\" is not a listen address: the host must be localhost, an "
       "IPv4 address or a bracketed IPv6 address (examples: localhost:4040, 127.0.0.1:4040, "
       "[::1]:4040, :4040)"},
      {"bad address from the environment",
       {},
       {{"LEASEHOLD_HTTP_ADDRESS", "4040"}},
       "LEASEHOLD_HTTP_ADDRESS (--address): \"4040\" is not a listen address: missing :port "
       "(examples: localhost:4040, 127.0.0.1:4040, [::1]:4040, :4040)"},
      {"port 0", {"--address=127.0.0.1:0"}, {}, "--address: the port must not be 0"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseProbeCommand(c.args, EnvWith(c.vars));
      REQUIRE_FALSE(r.ok());
      CHECK(r.code() == Code::kBadConfig);
      CHECK(r.status().message() == c.want);
    }
  }
  auto h = ParseProbeCommand({"--leader", "--help"}, EnvWith({}));
  REQUIRE(h.ok());
  CHECK(h->output.find("Usage: leasehold probe [--leader] [--address ADDR]") == 0);
}

// A stand-in for the agent: answers /readyz and /is-leader with the status the test sets.
struct FakeAgent {
  FakeAgent() {
    server.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      res.status = ready;
      res.set_content("{\"ready\":false}\n", "application/json");
    });
    server.Get("/is-leader", [this](const httplib::Request&, httplib::Response& res) {
      res.status = leader;
      res.set_content(leader == 200 ? "true" : "false", "text/plain");
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::yield();
  }
  ~FakeAgent() {
    server.stop();
    thread.join();
  }
  httplib::Server server;
  std::atomic<int> ready{200};
  std::atomic<int> leader{503};
  int port = 0;
  std::thread thread;
};

// A port on which nothing listens: bound, never listened on, so connections are refused.
struct ClosedPort {
  ClosedPort() {
    const leasehold::testing::LoopbackSocket s =
        leasehold::testing::ListenOnLoopback(0, /*listen_too=*/false);
    REQUIRE(s.fd >= 0);
    fd = s.fd;
    port = s.port;
  }
  ~ClosedPort() { close(fd); }
  int fd = -1;
  int port = 0;
};

TEST_CASE("RunProbe: exit codes") {
  FakeAgent agent;
  ClosedPort closed;
  const std::string here = "--address=127.0.0.1:" + std::to_string(agent.port);
  struct Case {
    const char* name;
    Strings args;
    int ready;
    int leader;
    int want;
  };
  const std::vector<Case> cases = {
      {"ready: 0", {here}, 200, 503, 0},
      {"not ready: 1", {here}, 503, 503, 1},
      {"--leader, leading: 0", {"--leader", here}, 503, 200, 0},
      {"--leader, not leading: 1", {"--leader", here}, 200, 503, 1},
      {"nothing listens: 1", {"--address=127.0.0.1:" + std::to_string(closed.port)}, 200, 200, 1},
      {"bad arguments: 2", {"--nope"}, 200, 200, 2},
      {"--help: 0", {"--help"}, 503, 503, 0},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      agent.ready = c.ready;
      agent.leader = c.leader;
      CHECK(RunProbe(c.args, EnvWith({})) == c.want);
    }
  }
}

TEST_CASE("ProbeOnce: the detail says what answered") {
  FakeAgent agent;
  agent.ready = 503;
  auto cmd = ParseProbeCommand({"--address=127.0.0.1:" + std::to_string(agent.port)}, EnvWith({}));
  REQUIRE(cmd.ok());
  std::string detail;
  CHECK(ProbeOnce(*cmd, std::chrono::seconds(1), &detail) == 503);
  CHECK(detail == "127.0.0.1:" + std::to_string(agent.port) + "/readyz: 503 {\"ready\":false}");
}

// Whatever listens at --address: one that answers 200 and then never stops sending, or one that
// never sends at all. The probe must end within its timeout and keep a bounded detail.
TEST_CASE("ProbeOnce: a listener that never stops or never starts talking") {
  struct Case {
    const char* name;
    bool talk;
    int want_status;
    std::string want_detail_start;
  };
  const std::vector<Case> cases = {
      {"endless body: the 200 counts, 300 bytes of detail are kept", true, 200,
       "/readyz: 200 " + std::string(300, 'A')},
      {"silent: no answer within the timeout", false, 0, "no answer ("},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      leasehold::testing::HostilePeer hostile(c.talk ? "HTTP/1.1 200 OK\r\n\r\n" : "",
                                              c.talk ? 4096 : 0);
      auto cmd =
          ParseProbeCommand({"--address=127.0.0.1:" + std::to_string(hostile.port())}, EnvWith({}));
      REQUIRE(cmd.ok());
      std::string detail;
      CHECK(ProbeOnce(*cmd, std::chrono::milliseconds(300), &detail) == c.want_status);
      const std::string prefix = "127.0.0.1:" + std::to_string(hostile.port());
      if (c.talk) {
        CHECK(detail == prefix + c.want_detail_start);
      } else {
        CHECK(detail.rfind(c.want_detail_start, 0) == 0);
        CHECK(detail.size() < 200);
      }
    }
  }
}

}  // namespace
}  // namespace leasehold::app
