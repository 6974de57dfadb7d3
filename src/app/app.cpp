#include "app/app.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/duration.h"
#include "app/flags.h"
#include "app/logging.h"
#include "app/signals.h"
#include "base/clock.h"
#include "base/version.h"
#include "election/elector.h"
#include "kube/cluster_config.h"
#include "locks/factory.h"
#include "server/http_server.h"

namespace leasehold::app {
namespace {

constexpr int kExitCannotRun = 1;
constexpr int kExitBadConfig = 2;

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// After logging is set up, failures go through the logger: still one line, and a JSON one
// under --log-format=json.
int Fail(int code, const std::string& message) {
  spdlog::error("{}", message);
  spdlog::default_logger()->flush();
  return code;
}

int Run(AppConfig config) {
  kube::LoadOptions load = config.kube;
  auto cluster = kube::LoadClusterConfig(load);
  if (!cluster.ok()) {
    return Fail(kExitBadConfig,
                "cannot load the Kubernetes API configuration: " + cluster.status().message());
  }
  // Like kubectl out of cluster: with nothing else naming a namespace, the context's counts.
  if (config.namespace_source == "default" && !cluster->default_namespace.empty()) {
    if (!IsDns1123Label(cluster->default_namespace)) {
      return Fail(kExitBadConfig, "--namespace: the kubeconfig context's namespace \"" +
                                      cluster->default_namespace + "\" is not valid");
    }
    config.name_space = cluster->default_namespace;
    config.namespace_source = cluster->source;
  }

  const election::ElectionConfig& ec = config.election;
  RealClock clock;
  kube::ClientOptions client_options;
  // Two tries fit in one renew-deadline; below 1s a healthy but busy API server would time out.
  client_options.request_timeout =
      std::max<Duration>(ec.renew_deadline() / 2, std::chrono::seconds(1));
  client_options.user_agent = std::string("leasehold/") + kVersion;
  auto client = kube::NewCurlApiClient(*cluster, client_options, clock);
  if (!client.ok()) {
    return Fail(kExitBadConfig,
                "cannot set up the Kubernetes API client: " + client.status().message());
  }

  locks::LockOptions lock_options;
  lock_options.type = config.lock_type;
  lock_options.name_space = config.name_space;
  lock_options.name = config.lock_name;
  lock_options.identity = ec.identity();
  lock_options.lease_duration = ec.lease_duration();
  auto lock = locks::NewLock(lock_options, **client, clock);
  if (!lock.ok()) {
    return Fail(kExitBadConfig, "cannot set up the lock: " + lock.status().message());
  }

  election::Elector elector(ec, **lock, clock, MakeRandom01());

  server::HandlerOptions handler_options;
  handler_options.started_at = clock.MonotonicNow();
  handler_options.lease_duration = ec.lease_duration();
  handler_options.release = [&elector] { elector.AcknowledgeRelease(); };
  auto server = server::HttpServer::Create(
      config.http_address,
      [&elector](bool promise) { return promise ? elector.Take() : elector.Peek(); }, clock,
      handler_options);
  if (!server.ok()) {
    return Fail(kExitBadConfig, "--http-address: " + server.status().message());
  }

  const election::LockDescription lock_desc = (*lock)->Describe();
  spdlog::info("leasehold {} starting: identity {}, lock {} {}/{} (namespace from {})", kVersion,
               ec.identity(), lock_desc.type, config.name_space, config.lock_name,
               config.namespace_source);
  spdlog::info(
      "timings: lease-duration {}, renew-deadline {}, retry-period {}; release-on-shutdown {}, "
      "release-holdoff {}; API server from {}, request timeout {}",
      FormatGoDuration(ec.lease_duration()), FormatGoDuration(ec.renew_deadline()),
      FormatGoDuration(ec.retry_period()), election::ReleaseModeName(ec.release_mode()),
      FormatGoDuration(ec.release_holdoff()), cluster->source,
      FormatGoDuration(client_options.request_timeout));

  // Declared after the elector, so it is joined before the elector goes away.
  SignalWatcher signals([&elector, &ec](int signo) {
    spdlog::info("received {}: stopping (release-on-shutdown {}); a second signal exits at once",
                 SignalName(signo), election::ReleaseModeName(ec.release_mode()));
    elector.Stop();
  });

  if (Status st = (*server)->Start(); !st.ok()) {
    return Fail(kExitCannotRun, "--http-address " + config.http_address + ": " + st.message());
  }
  spdlog::info("local API listening on {}", Join((*server)->listening()));

  elector.Run();

  (*server)->Stop();
  spdlog::info("stopped");
  spdlog::default_logger()->flush();
  return 0;
}

}  // namespace

int Main(int argc, char** argv) {
  // Before any thread exists, so every thread inherits the mask (see signals.h).
  BlockTerminationSignals();
  // A client hanging up mid-answer must not kill the agent.
  signal(SIGPIPE, SIG_IGN);

  const std::vector<std::string> args(argv + 1, argv + argc);
  auto command = ParseCommandLine(args, RealEnvironment());
  if (!command.ok()) {
    std::fprintf(stderr, "leasehold: %s\n", command.status().message().c_str());
    return kExitBadConfig;
  }
  if (!command->config) {
    std::fputs(command->output.c_str(), stdout);
    return 0;
  }
  AppConfig config = std::move(*std::move(command).value().config);
  SetupLogging(config.log_format, config.log_level);
  return Run(std::move(config));
}

}  // namespace leasehold::app
