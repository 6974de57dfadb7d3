// A hand-made HTTP client on a raw socket to 127.0.0.1, so that a test can send any bytes, stop
// reading, pipeline, or set a tiny receive buffer. Shared by the listener's tests.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "base/clock.h"

namespace leasehold::localapi {

class RawClient {
 public:
  using Steady = std::chrono::steady_clock;

  explicit RawClient(int port, int rcvbuf = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() { Close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }

  // Sends all of `bytes`; false when the connection refused them (e.g. the server closed it).
  bool Send(const std::string& bytes) {
    if (!connected_) return false;
    size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  bool Get(const std::string& path) { return Send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"); }

  // Reads until `needle` has arrived `count` times in all (or EOF, or `limit` passes).
  bool ReadUntil(const std::string& needle, int count = 1,
                 Duration limit = std::chrono::seconds(5)) {
    const auto until = Steady::now() + limit;
    while (Count(needle) < count) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(until - Steady::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buf[65536];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        eof_ = true;
        return Count(needle) >= count;
      }
      data_.append(buf, static_cast<size_t>(n));
    }
    return true;
  }
  // Reads until the server closes the connection.
  bool ReadToEof(Duration limit = std::chrono::seconds(5)) {
    ReadUntil("\x01never\x01", 1, limit);
    return eof_;
  }
  int Count(const std::string& needle) const {
    int n = 0;
    for (size_t at = data_.find(needle); at != std::string::npos;
         at = data_.find(needle, at + needle.size())) {
      ++n;
    }
    return n;
  }
  // The server closed the connection (seen without reading).
  bool PeerClosed() const {
    pollfd p{fd_, POLLRDHUP, 0};
    return fd_ < 0 || (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
  }
  const std::string& data() const { return data_; }
  bool eof() const { return eof_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string data_;
};

}  // namespace leasehold::localapi
