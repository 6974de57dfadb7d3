#include "app/app.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/flags.h"
#include "app/gate_command.h"
#include "app/gate_probe.h"
#include "app/install.h"
#include "app/logging.h"
#include "app/probe.h"
#include "app/signals.h"
#include "base/clock.h"
#include "base/duration.h"
#include "base/text.h"
#include "base/version.h"
#include "cluster/announcer.h"
#include "cluster/lock_watcher.h"
#include "election/elector.h"
#include "election/observer.h"
#include "election/publisher.h"
#include "http/listener.h"
#include "kube/cluster_config.h"
#include "kube/curl_api_client.h"
#include "kube/names.h"
#include "kube/watch.h"
#include "localapi/leader_doc.h"
#include "localapi/metrics.h"
#include "localapi/router.h"
#include "localapi/status_file.h"
#include "localapi/watch_hub.h"
#include "locks/factory.h"
#include "locks/local_lock.h"

namespace leasehold::app {
namespace {

// Both API clients (the elector's and the announcer's) fail start-up with the same words.
constexpr const char* kClientSetupFailed = "cannot set up the Kubernetes API client: ";

constexpr int kExitCannotRun = 1;
constexpr int kExitBadConfig = 2;

// The probe listener serves the kubelet, a few connections at a time, but the rest of the
// cluster can reach it. When full, each new connection sheds the one that waited longest for
// its request, so a probe is shed only if this many connections were opened after it before
// its request arrived: at 4,000 attacker connections a second
// (e2e/scenarios/adversarial.py), 32 ms.
constexpr int kProbeConnections = 128;
// Events and the leader label: each request's timeout, and how long the last ones ("stopped
// leading", label follower) may take at shutdown.
constexpr Duration kAnnounceTimeout = std::chrono::seconds(5);
constexpr Duration kAnnounceShutdownBudget = std::chrono::seconds(2);

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

// The running agent: every part Run() wires together. Members are declared in the order they
// depend on each other, so they are destroyed in reverse: the servers and sinks before the
// publisher, the publisher before the elector, the elector before its lock and clients.
struct Agent {
  explicit Agent(AppConfig c) : config(std::move(c)), metrics(clock) {}

  AppConfig config;
  // --lock-type none: leader election is off. Nothing may then reach for the API server: no
  // configuration, no token, no client.
  bool election_off() const { return config.lock.type == election::LockType::kNone; }
  std::string pod_namespace() const {
    return config.leader_pod.pod_namespace.empty() ? config.lock.name_space
                                                   : config.leader_pod.pod_namespace;
  }

  RealClock clock;
  localapi::Metrics metrics;
  std::optional<kube::ClusterConfig> cluster;
  kube::ClientOptions client_options;
  std::unique_ptr<kube::ApiClient> client;
  std::unique_ptr<kube::Watcher> watcher;
  std::unique_ptr<election::Lock> lock;
  std::unique_ptr<election::Elector> elector;
  std::unique_ptr<election::Observer> observer;  // --agent-mode observe, in place of the elector
  election::Runner& runner() const {
    return observer ? static_cast<election::Runner&>(*observer) : *elector;
  }
  // The identity the local API and the Events name: the pod's in observe mode (the holder's
  // own identity is the operator's).
  std::string identity() const {
    return observer ? config.observe_match.name : config.election.identity();
  }
  std::unique_ptr<election::Publisher> publisher;
  std::unique_ptr<localapi::WatchHub> hub;
  std::unique_ptr<localapi::StatusFile> status_file;
  std::unique_ptr<kube::ApiClient> announce_client;
  std::unique_ptr<cluster::KubeAnnouncer> announcer;
  std::unique_ptr<http::Listener> server;
  std::unique_ptr<http::Listener> probe_server;
};

// A start-up step: Ok, or the exit code and the one line that says why.
struct StepError {
  int code;
  std::string message;
};
using Step = std::optional<StepError>;

Step LoadCluster(Agent& a) {
  AppConfig& config = a.config;
  if (a.election_off()) {
    // Nobody else can hold the lock, so nothing waits for a release: stop at once.
    auto off = election::ElectionConfig::Create(
        config.election.identity(), config.election.timings(), election::ReleaseMode::kOff,
        config.election.release_holdoff());
    if (off.ok()) config.election = std::move(off).value();
    return std::nullopt;
  }
  auto loaded = kube::LoadClusterConfig(config.kube);
  if (!loaded.ok()) {
    return StepError{kExitBadConfig,
                     "cannot load the Kubernetes API configuration: " + loaded.status().message()};
  }
  a.cluster = std::move(loaded).value();
  // Like kubectl out of cluster: with nothing else naming a namespace, the context's counts.
  if (config.lock.namespace_source == "default" && !a.cluster->default_namespace.empty()) {
    if (!kube::IsDns1123Label(a.cluster->default_namespace)) {
      return StepError{kExitBadConfig, "--namespace: the kubeconfig context's namespace \"" +
                                           a.cluster->default_namespace + "\" is not valid"};
    }
    config.lock.name_space = a.cluster->default_namespace;
    config.lock.namespace_source = a.cluster->source;
  }
  return std::nullopt;
}

// The API clients, the lock and the elector.
Step MakeElector(Agent& a) {
  const AppConfig& config = a.config;
  const election::ElectionConfig& ec = config.election;
  a.client_options.observer = [&metrics = a.metrics](const std::string& verb, long http_status,
                                                     Duration) {
    metrics.ObserveRequest(verb, http_status);
  };
  // Two tries fit in one renew-deadline; below 1s a healthy but busy API server would time out.
  a.client_options.request_timeout =
      std::max<Duration>(ec.renew_deadline() / 2, std::chrono::seconds(1));
  a.client_options.user_agent = std::string("leasehold/") + kVersion;

  if (a.election_off()) {
    spdlog::warn(
        "leader election is OFF (--lock-type none): this replica always answers \"leader\". "
        "With more than one replica, each one would act as leader.");
    if (!config.leader_pod.label.empty()) {
      spdlog::warn("--leader-label is ignored with --lock-type none: it would call the API");
    }
    if (config.leader_pod.deletion_cost) {
      spdlog::warn("--deletion-cost is ignored with --lock-type none: it would call the API");
    }
    a.lock = std::make_unique<locks::LocalLock>(config.lock.name_space, config.lock.name);
  } else {
    auto c = kube::NewCurlApiClient(*a.cluster, a.client_options, a.clock);
    if (!c.ok()) {
      return StepError{kExitBadConfig, kClientSetupFailed + c.status().message()};
    }
    a.client = std::move(c).value();
    // Followers watch the lock object on a connection of their own (see cluster/lock_watcher.h).
    auto w = kube::NewCurlWatcher(*a.cluster, a.client_options, a.clock);
    if (!w.ok()) {
      return StepError{kExitBadConfig,
                       "cannot set up the Kubernetes API watch: " + w.status().message()};
    }
    a.watcher = std::move(w).value();
    locks::LockOptions lock_options;
    lock_options.type = config.lock.type;
    lock_options.name_space = config.lock.name_space;
    lock_options.name = config.lock.name;
    lock_options.identity = ec.identity();
    lock_options.lease_duration = ec.lease_duration();
    auto l = locks::NewLock(lock_options, *a.client, a.clock);
    if (!l.ok())
      return StepError{kExitBadConfig, "cannot set up the lock: " + l.status().message()};
    a.lock = std::move(l).value();
  }
  if (config.mode == AgentMode::kObserve) {
    election::ObserverConfig oc;
    oc.match = config.observe_match;
    oc.identity = config.observe_match.name;
    oc.lease_duration = ec.lease_duration();
    oc.renew_deadline = ec.renew_deadline();
    oc.retry_period = ec.retry_period();
    a.observer = std::make_unique<election::Observer>(oc, *a.lock, a.clock);
    return std::nullopt;
  }
  a.elector = std::make_unique<election::Elector>(ec, *a.lock, a.clock, MakeRandom01());
  return std::nullopt;
}

// Everyone who is told rather than asks: watch streams, the status file, Events, the label.
Step MakeSinks(Agent& a) {
  const AppConfig& config = a.config;
  election::Runner& elector = a.runner();
  a.publisher = std::make_unique<election::Publisher>(elector.Source(), a.clock);
  a.publisher->SetWriteHook(&a.metrics);

  if (config.local_api.max_watchers > 0) {
    localapi::WatchHubOptions hub_options;
    hub_options.max_watchers = config.local_api.max_watchers;
    a.hub = std::make_unique<localapi::WatchHub>(*a.publisher, hub_options);
    a.publisher->AddSink(a.hub.get());
    a.metrics.SetWatchers([&hub = *a.hub] { return hub.watchers(); });
  }

  if (!config.local_api.status_file.empty()) {
    const std::string initial = localapi::LeaderLine(elector.Peek(), a.clock);
    auto file = localapi::StatusFile::Create(config.local_api.status_file, initial, a.clock);
    if (!file.ok()) return StepError{kExitBadConfig, "--status-file: " + file.status().message()};
    a.status_file = std::move(file).value();
    a.publisher->AddSink(a.status_file.get());
  }

  // Events and the label go through a client of their own: a slow Event POST holds its own
  // connection, never the one the elector renews on.
  if (!a.election_off()) {
    kube::ClientOptions announce_options = a.client_options;
    announce_options.request_timeout = kAnnounceTimeout;
    auto c = kube::NewCurlApiClient(*a.cluster, announce_options, a.clock);
    if (!c.ok()) {
      return StepError{kExitBadConfig, kClientSetupFailed + c.status().message()};
    }
    a.announce_client = std::move(c).value();
    cluster::KubeAnnouncerOptions ao;
    ao.identity = a.identity();
    ao.events = true;
    ao.label_key = config.leader_pod.label;
    ao.deletion_cost = config.leader_pod.deletion_cost;
    ao.pod_name = config.leader_pod.pod_name;
    ao.pod_namespace = a.pod_namespace();
    ao.request_timeout = kAnnounceTimeout;
    a.announcer = std::make_unique<cluster::KubeAnnouncer>(*a.announce_client, a.clock, ao);
    a.publisher->AddSink(a.announcer.get());
  }
  elector.SetListener(a.publisher->Listener());
  return std::nullopt;
}

// The local API and the probe listener, created (bound) but not started.
Step MakeServers(Agent& a) {
  const AppConfig& config = a.config;
  const election::ElectionConfig& ec = config.election;
  election::Runner& elector = a.runner();
  localapi::HandlerOptions handler_options;
  handler_options.started_at = a.clock.MonotonicNow();
  handler_options.timings = ec.timings();
  if (a.observer) {
    handler_options.observe_only = true;
  } else {
    handler_options.release = [&elector] { elector.AcknowledgeRelease(); };
  }
  localapi::MetricsLabels labels;
  labels.lock_namespace = config.lock.name_space;
  labels.lock_name = config.lock.name;
  labels.lock_type = std::string(election::LockTypeName(config.lock.type));
  labels.version = kVersion;
  labels.timings = ec.timings();
  a.metrics.SetLabels(std::move(labels));
  handler_options.metrics = [&metrics = a.metrics, &elector] {
    return metrics.Render(elector.gauges());
  };
  auto server = localapi::Listen(config.local_api.http_address, elector.Source(), a.clock,
                                 handler_options, a.hub.get());
  if (!server.ok()) {
    return StepError{kExitBadConfig, "--http-address: " + server.status().message()};
  }
  a.server = std::move(server).value();
  if (!config.local_api.probe_address.empty()) {
    localapi::HandlerOptions probe_handler = handler_options;
    probe_handler.probe_only = true;
    probe_handler.release = nullptr;
    http::ListenerOptions probe_options;
    probe_options.max_connections = kProbeConnections;
    auto p = localapi::Listen(config.local_api.probe_address, elector.Source(), a.clock,
                              probe_handler, /*watch=*/nullptr, probe_options);
    if (!p.ok()) return StepError{kExitBadConfig, "--probe-address: " + p.status().message()};
    a.probe_server = std::move(p).value();
  }
  return std::nullopt;
}

void LogStart(const Agent& a) {
  const AppConfig& config = a.config;
  const election::ElectionConfig& ec = config.election;
  spdlog::info("leasehold {} starting: identity {}, lock {} {}/{} (namespace from {})", kVersion,
               a.identity(), election::LockTypeName(a.lock->Describe().type),
               config.lock.name_space, config.lock.name, config.lock.namespace_source);
  if (a.observer) {
    const election::HolderMatch& m = config.observe_match;
    spdlog::info(
        "agent mode observe: never writes the lock; this pod leads while the holder {} "
        "(--observe-identity {})",
        m.rule == election::MatchRule::kPod ? "is " + m.name + " or starts with \"" + m.name + "_\""
                                            : "is exactly " + m.name,
        election::MatchRuleName(m.rule));
  }
  // An observer never renews nor releases: the settings for those would only mislead a reader.
  const std::string writes =
      a.observer ? std::string("observe mode: no renew, no release")
                 : fmt::format("renew-interval {}; release-on-shutdown {}, release-holdoff {}",
                               FormatGoDuration(ec.renew_interval()),
                               election::ReleaseModeName(ec.release_mode()),
                               FormatGoDuration(ec.release_holdoff()));
  spdlog::info(
      "timings: lease-duration {}, renew-deadline {}, retry-period {}, {}; API server from {}, "
      "request timeout {}",
      FormatGoDuration(ec.lease_duration()), FormatGoDuration(ec.renew_deadline()),
      FormatGoDuration(ec.retry_period()), writes,
      a.cluster ? a.cluster->source : "nowhere (election off)",
      FormatGoDuration(a.client_options.request_timeout));
}

// What the first signal's log line says the agent does as it stops.
std::string StoppingWhat(const Agent& a) {
  if (a.observer) {
    return "observe mode: stops answering \"yes\" and watching the lock; it never wrote the "
           "lock, so nothing is released: the operator that holds it does that";
  }
  return "release-on-shutdown " +
         std::string(election::ReleaseModeName(a.config.election.release_mode()));
}

// Starts the listeners and the sinks; the elector then runs until the first signal stops it.
Step Serve(Agent& a, FirstSignal& first_signal) {
  const AppConfig& config = a.config;
  election::Runner& elector = a.runner();
  // From here the first signal stops the elector instead of exiting (see Main); disarmed before
  // this returns, so before the elector goes away.
  first_signal.Arm([&elector, stopping = StoppingWhat(a)](int signo) {
    spdlog::info("received {}: stopping ({}); a second signal exits at once", SignalName(signo),
                 stopping);
    elector.Stop();
  });
  struct Disarm {
    FirstSignal& s;
    ~Disarm() { s.Disarm(); }
  } disarm{first_signal};

  if (Status st = a.server->Start(); !st.ok()) {
    return StepError{kExitCannotRun,
                     "--http-address " + config.local_api.http_address + ": " + st.message()};
  }
  spdlog::info("local API listening on {}", Join(a.server->listening()));
  if (a.probe_server) {
    if (Status st = a.probe_server->Start(); !st.ok()) {
      a.server->Stop();
      return StepError{kExitCannotRun,
                       "--probe-address " + config.local_api.probe_address + ": " + st.message()};
    }
    spdlog::info("probe listener (/healthz, /readyz, /is-leader, /metrics) on {}",
                 Join(a.probe_server->listening()));
  }
  if (a.status_file) spdlog::info("status file: {}", a.status_file->path());
  if (!config.leader_pod.label.empty()) {
    spdlog::info("leader label: {} on pod {}/{}", config.leader_pod.label, a.pod_namespace(),
                 config.leader_pod.pod_name);
  }
  if (config.leader_pod.deletion_cost) {
    spdlog::info("deletion cost: {} on pod {}/{} while it leads", *config.leader_pod.deletion_cost,
                 a.pod_namespace(), config.leader_pod.pod_name);
  }
  if (a.announcer) a.announcer->Start();
  a.publisher->Start();

  // Threads that feed the elector (the watch on the lock object) start here, after everything
  // the elector's listener reaches is running, and stop right after the elector returns, before
  // anything below tears down.
  std::unique_ptr<cluster::LockWatcher> lock_watcher;
  std::thread lock_watch_thread;
  if (a.watcher) {
    lock_watcher = std::make_unique<cluster::LockWatcher>(
        *a.watcher, elector, *a.lock, a.clock, config.election.retry_period(),
        [&metrics = a.metrics](const char* reason) { metrics.ObserveWatchRestart(reason); });
    lock_watch_thread = std::thread([&lock_watcher] { lock_watcher->Run(); });
  }
  elector.Run();
  if (lock_watcher) {
    lock_watcher->Stop();
    lock_watch_thread.join();
  }
  return std::nullopt;
}

// After the elector returned: the final state to every sink, then the listeners stop.
void Shutdown(Agent& a) {
  a.runner().SetListener(nullptr);
  // Publishes the final state ("not leader") to the streams, the status file and the announcer.
  a.publisher->Stop();
  // "stopped leading" and the label "follower", in bounded time.
  if (a.announcer) a.announcer->Shutdown(kAnnounceShutdownBudget);
  a.server->Stop();
  if (a.probe_server) a.probe_server->Stop();
  spdlog::info("stopped");
  spdlog::default_logger()->flush();
}

int Run(AppConfig config, FirstSignal& first_signal) {
  Agent agent(std::move(config));
  for (Step (*step)(Agent&) : {LoadCluster, MakeElector, MakeSinks, MakeServers}) {
    if (Step failed = step(agent)) return Fail(failed->code, failed->message);
  }
  LogStart(agent);
  if (Step failed = Serve(agent, first_signal)) return Fail(failed->code, failed->message);
  Shutdown(agent);
  return 0;
}

// `leasehold NAME ARGS...`: the subcommands, one row each. A row's function gets the arguments
// after NAME and the process's environment, and returns the exit code.
struct Subcommand {
  const char* name;
  int (*run)(const std::vector<std::string>& args, const Environment& env);
};
const Subcommand kSubcommands[] = {
    {"probe", RunProbe},
    {"gate", RunGateCommand},
    {"gate-probe", RunGateProbe},
    {"install",
     [](const std::vector<std::string>& args, const Environment&) { return RunInstall(args); }},
};

}  // namespace

int Main(int argc, char** argv) {
  // Before any thread exists, so every thread inherits the mask (see signals.h).
  BlockTerminationSignals();
  // A client hanging up mid-answer must not kill the agent.
  signal(SIGPIPE, SIG_IGN);

  const std::vector<std::string> args(argv + 1, argv + argc);
  // Subcommands run instead of the agent, dispatched before the SignalWatcher thread below
  // exists: the gate takes every signal through its own signalfd loop, single-threaded (it forks
  // CMD).
  if (!args.empty()) {
    for (const Subcommand& c : kSubcommands) {
      if (args[0] == c.name) {
        return c.run(std::vector<std::string>(args.begin() + 1, args.end()), RealEnvironment());
      }
    }
  }
  // Watching before any I/O (the namespace file, the kubeconfig, token and CA, the status file):
  // as PID 1 a blocked SIGTERM nobody waits for is ignored until start-up ends, however long
  // that takes. Until Run() arms it, the first signal exits at once (code 0): no lock is held
  // yet, so there is nothing to release. (`leasehold probe` above is bounded by its 1s timeout.)
  std::atomic<bool> logging_ready{false};
  FirstSignal first_signal([&logging_ready](int signo) {
    // The exit must not wait for the log line: stderr may be a pipe nobody drains, and the
    // thread that blocked on it holds the logger.
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      std::_Exit(0);
    }).detach();
    if (logging_ready) {
      spdlog::info("received {} during start-up: exiting (no lock held)", SignalName(signo));
      spdlog::default_logger()->flush();
    } else {
      std::fprintf(stderr, "leasehold: received %s during start-up: exiting\n", SignalName(signo));
    }
    std::fflush(stderr);
    std::_Exit(0);
  });
  SignalWatcher signals([&first_signal](int signo) { first_signal(signo); });

  auto command = ParseCommandLine(args, RealEnvironment());
  if (!command.ok()) {
    std::fprintf(stderr, "leasehold: %s\n", EscapeForLog(command.status().message()).c_str());
    return kExitBadConfig;
  }
  if (!command->config) {
    std::fputs(command->output.c_str(), stdout);
    return 0;
  }
  AppConfig config = std::move(*command->config);
  SetupLogging(config.log.format, config.log.level);
  logging_ready = true;
  for (const std::string& warning : command->warnings) spdlog::warn("{}", warning);
  return Run(std::move(config), first_signal);
}

}  // namespace leasehold::app
