// A hostile HTTP peer on 127.0.0.1 (port 0) for the loopback clients' tests: it accepts one
// connection, sends `head`, then either floods `flood_chunk`-byte chunks of 'A' until the client
// goes (flood_chunk > 0) or says nothing more (0), until destroyed.
#pragma once

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "fakes/loopback_listener.h"

namespace leasehold::testing {

class HostilePeer {
 public:
  HostilePeer(std::string head, size_t flood_chunk)
      : head_(std::move(head)), chunk_(flood_chunk, 'A') {
    const LoopbackSocket s = ListenOnLoopback();
    REQUIRE(s.fd >= 0);
    fd_ = s.fd;
    port_ = s.port;
    thread_ = std::thread([this] {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      if (!head_.empty()) send(c, head_.data(), head_.size(), MSG_NOSIGNAL);
      while (!stop_.load()) {
        if (chunk_.empty()) {
          usleep(1000);
        } else if (send(c, chunk_.data(), chunk_.size(), MSG_NOSIGNAL) < 0) {
          break;
        }
      }
      close(c);
    });
  }
  ~HostilePeer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  HostilePeer(const HostilePeer&) = delete;
  HostilePeer& operator=(const HostilePeer&) = delete;

  int port() const { return port_; }

 private:
  const std::string head_;
  const std::string chunk_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace leasehold::testing
