#include "localapi/watch_hub.h"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "localapi/leader_doc.h"

namespace leasehold::localapi {

// A client is the listener's http::Stream: the listener takes its frames and watches its eventfd.
class WatchHub::Client final : public http::Stream {
 public:
  Client(WatchHub* hub, std::string peer, int efd) : hub_(hub), peer_(std::move(peer)), efd_(efd) {}
  Frames Take(size_t max) override { return hub_->Take(*this, max); }
  int SignalFd() const override { return efd_; }
  Duration Heartbeat() const override { return hub_->options().heartbeat; }
  std::string KeepAlive() const override { return contract::kPing; }
  ~Client() {
    if (registered_) hub_->Remove(this);
    (void)close(efd_);  // an eventfd holds no data of ours: nothing to lose or retry
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

 private:
  friend class WatchHub;

  // Wakes the listener's event loop, which polls this eventfd beside the client's socket.
  void Signal() {
    const uint64_t one = 1;
    // Only fails when the counter would overflow, and then it is readable anyway.
    [[maybe_unused]] ssize_t n = write(efd_, &one, sizeof one);
  }

  WatchHub* const hub_;
  const std::string peer_;
  const int efd_;
  bool registered_ = false;  // in hub_->clients_; set under the hub's lock

  std::mutex mu_;  // guards the fields below
  std::deque<std::string> frames_;
  bool ended_ = false;
};

WatchHub::WatchHub(election::Publisher& publisher, WatchHubOptions options)
    : publisher_(publisher), options_(options) {}

WatchHub::~WatchHub() {
  std::lock_guard<std::mutex> l(mu_);
  if (!clients_.empty()) spdlog::error("watch hub destroyed with {} clients", clients_.size());
}

std::string WatchHub::EventFrame(const std::string& json) { return contract::EventFrame(json); }

int WatchHub::watchers() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(clients_.size());
}

Result<std::shared_ptr<WatchHub::Client>> WatchHub::Attach(const std::string& peer) {
  auto too_many = [this] {
    return Status(Code::kUnavailable, "too many watchers (--max-watchers=" +
                                          std::to_string(options_.max_watchers) + ")");
  };
  {
    // A cheap early answer, so a refused client costs no promise.
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return Status(Code::kUnavailable, "shutting down");
    if (static_cast<int>(clients_.size()) >= options_.max_watchers) return too_many();
  }
  const int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (efd < 0) {
    return Status(Code::kUnavailable,
                  std::string("cannot create an eventfd: ") + std::strerror(errno));
  }
  std::shared_ptr<Client> client(new Client(this, peer, efd));
  Status result;
  publisher_.Attach([&](const election::Publication& current) {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) {
      result = Status(Code::kUnavailable, "shutting down");
      return;
    }
    if (static_cast<int>(clients_.size()) >= options_.max_watchers) {
      result = too_many();
      return;
    }
    clients_.push_back(client.get());
    client->registered_ = true;
    std::lock_guard<std::mutex> cl(client->mu_);
    // Rendered now: validForMs counts from the moment the client attaches.
    client->frames_.push_back(EventFrame(LeaderLine(current.snapshot, publisher_.clock())));
  });
  if (!result.ok()) return result;
  spdlog::debug("watch: {} connected", peer);
  return client;
}

void WatchHub::Remove(Client* client) {
  std::lock_guard<std::mutex> l(mu_);
  clients_.erase(std::remove(clients_.begin(), clients_.end(), client), clients_.end());
  spdlog::debug("watch: {} disconnected", client->peer_);
}

void WatchHub::Publish(const election::Publication& p) {
  const std::string frame = EventFrame(LeaderLine(p.snapshot, publisher_.clock()));
  std::lock_guard<std::mutex> l(mu_);
  for (Client* c : clients_) {
    std::lock_guard<std::mutex> cl(c->mu_);
    if (c->ended_) continue;
    if (c->frames_.size() >= options_.queue_limit) {
      // It has not taken an event for a long time; the newest state cannot reach it behind the
      // queued ones. Cut it off: a client that reconnects starts from the current state.
      c->ended_ = true;
      c->frames_.clear();
      spdlog::warn("watch: {} fell {} events behind; disconnecting it", c->peer_,
                   options_.queue_limit);
    } else {
      c->frames_.push_back(frame);
    }
    c->Signal();
  }
}

void WatchHub::Close() {
  std::lock_guard<std::mutex> l(mu_);
  closed_ = true;
  for (Client* c : clients_) {
    std::lock_guard<std::mutex> cl(c->mu_);
    c->ended_ = true;
    // Keep the newest event only: it carries the final state, and a stalled client then costs
    // at most one write timeout.
    while (c->frames_.size() > 1) c->frames_.pop_front();
    c->Signal();
  }
}

WatchHub::Frames WatchHub::Take(Client& client, size_t max) {
  uint64_t count;
  // Cleared before the queue is read: a frame queued after this read signals again.
  [[maybe_unused]] ssize_t r = read(client.efd_, &count, sizeof count);
  Frames out;
  std::lock_guard<std::mutex> l(client.mu_);
  while (!client.frames_.empty() && out.frames.size() < max) {
    out.frames.push_back(std::move(client.frames_.front()));
    client.frames_.pop_front();
  }
  out.ended = client.ended_ && client.frames_.empty();
  return out;
}

int WatchHub::SignalFd(const Client& client) const { return client.efd_; }

std::shared_ptr<http::Stream> WatchHub::AsStream(std::shared_ptr<Client> client) { return client; }

}  // namespace leasehold::localapi
