// A TCP socket on 127.0.0.1 for the tests' fake servers and hostile peers: bound to `port` (0:
// any free one), listening unless `listen_too` is false (a bound port that refuses
// connections). SO_REUSEADDR, so that a fake can come back on the port it had.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace leasehold::testing {

struct LoopbackSocket {
  int fd = -1;  // -1: socket, bind or listen failed
  int port = 0;
};

inline LoopbackSocket ListenOnLoopback(int port = 0, bool listen_too = true, int backlog = 64) {
  LoopbackSocket out;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return out;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      (listen_too && listen(fd, backlog) != 0) ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return out;
  }
  out.fd = fd;
  out.port = ntohs(a.sin_port);
  return out;
}

}  // namespace leasehold::testing
