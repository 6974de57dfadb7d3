// GET /leader/watch: the state of the election as Server-Sent Events, fanned out to every
// connected client through a bounded queue of its own.
//
//   event: leader
//   data: {"name":"pod-a_1a2b3c4d","leader":"pod-a_1a2b3c4d",...,"isLeader":true,...}
//
// The first event is the current state (the /leader JSON); then one event per publication (see
// election/publisher.h): a change of holder, isLeader or term, and every renew while this replica
// leads. Each event is rendered here, once for every client, when it is published (or, the first,
// when the client attaches), judged on the publisher's clock at that moment.
// A comment line ": ping" follows every `heartbeat` of silence.
//
// Nothing a client does can hold up the election or another client: the publisher's thread only
// appends to queues, and the listener's event loop writes each stream without blocking (see
// http/listener.h for its write timeout and heartbeat).
// A client whose queue is full (it stopped reading, or reads too slowly) is disconnected, as is
// one that hangs up; a disconnected client must treat this replica as not leading until it has
// reconnected and read the first event again.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "contract/sse.h"
#include "election/publisher.h"
#include "http/route.h"

namespace leasehold::localapi {

struct WatchHubOptions {
  // Streams open at once; one more gets 503. Each holds a socket and an eventfd (see
  // http/listener.h). The agent sets it from --max-watchers.
  int max_watchers = 100;
  // Events queued for one client before it counts as stalled and is disconnected: the
  // default is about two minutes of renewals at the default retry-period.
  size_t queue_limit = 64;
  // Silence after which the listener sends a ": ping" comment.
  Duration heartbeat = std::chrono::seconds(15);
};

class WatchHub final : public election::PublicationSink {
 public:
  class Client;

  // `publisher` must outlive the hub; register the hub with Publisher::AddSink yourself. Events
  // are rendered on the publisher's clock.
  WatchHub(election::Publisher& publisher, WatchHubOptions options);
  ~WatchHub() override;  // every Client must be gone by then
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Registers a client, `peer` naming it in logs, with its first event already queued: the
  // current state, taken as a promise. Unavailable when max_watchers clients are connected or
  // the hub is closed. The client unregisters when the last reference to it goes.
  Result<std::shared_ptr<Client>> Attach(const std::string& peer);

  // What a client's stream writes next (for the listener's event loop; never blocks): at most
  // `max` queued frames, oldest first, and whether the stream must end once they are written
  // (the client fell behind and was cut off, or the hub was closed after its last event).
  // A client as the listener's http::Stream (Take() and SignalFd() below, the heartbeat and
  // kPing).
  static std::shared_ptr<http::Stream> AsStream(std::shared_ptr<Client> client);

  using Frames = http::Stream::Frames;
  Frames Take(Client& client, size_t max);

  // An eventfd that turns readable when `client` has frames to take or has ended; the event loop
  // watches it beside the client's socket. Take() clears it.
  int SignalFd(const Client& client) const;

  // Ends every stream: each client gets at most the last event already queued for it (so a
  // final "not leader" still goes out), and Attach fails from now on. Idempotent.
  void Close();

  int watchers() const;
  const WatchHubOptions& options() const { return options_; }

  // PublicationSink
  void Publish(const election::Publication& p) override;
  bool HandsOutLeadership() const override { return watchers() > 0; }

  // "event: leader\ndata: <json>\n\n" (contract/sse.h).
  static std::string EventFrame(const std::string& json);
  static constexpr const char* kPing = contract::kPing;

 private:
  void Remove(Client* client);

  election::Publisher& publisher_;
  const WatchHubOptions options_;
  mutable std::mutex mu_;  // guards the fields below; taken after the publisher's lock
  bool closed_ = false;
  std::vector<Client*> clients_;
};

}  // namespace leasehold::localapi
