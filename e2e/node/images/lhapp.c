// The node tier's stand-in for the example `app` (static, FROM scratch; no busybox wget, whose -T
// segfaults in Debian 12's 1.35). One clock for every stamp: CLOCK_REALTIME in microseconds,
// shared by every pod on the one node, so two pods' lines compare directly.
//
//   lhapp [work]   loop: ask GET /leader on 127.0.0.1:$LHAPP_PORT (default 4040); on
//                  isLeader:true do one unit of "leader-only work" (a sleep of $LHAPP_UNIT_MS,
//                  default 100) that ends early at ask + validForMs - $LHAPP_MARGIN_MS
//                  (default 50): the app honours validUntil, measured from before it asked.
//                  Between units (and after a "no") it waits $LHAPP_IDLE_MS (default 20).
//   lhapp gated    for `leasehold gate -- lhapp gated`: stamps its start, runs until a signal,
//                  stamps its end.
// With $LHAPP_STOP_FILE (the classic overlay's /run/app/stop, created by its preStop hook) it
// stops taking work when the file appears, creates $LHAPP_STOPPED_FILE and waits for a signal.
// SIGTERM ends any wait or unit at once (an interruptible wait: failover is not delayed by a
// sleep that ignores the signal); then, as the example app of deploy/base does, `work` POSTs
// /release to the sidecar (bounded: 1 s per socket operation), so that a sidecar running
// --release-on-shutdown=safe releases at once instead of waiting out the "yes" it gave, and
// exits. A SIGTERM of the sidecar alone brings no POST. Lines on stdout (the CRI log):
//   LHUNIT ask=US ans=US term=N valid_ms=N start=US end=US cut=0|1|2   (cut 1: validUntil, 2:
//   signal) LHNO ask=US ans=US code=N            (only when the answer changes from yes to no / at
//   start) LHRELEASE ask=US ans=US code=N       (the POST /release at SIGTERM; code -1: no answer)
//   LHSTART at=US mode=M / LHEXIT at=US sig=N
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_signal = 0;
static void on_signal(int sig) { g_signal = sig; }

static long long now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static long env_long(const char* name, long def) {
  const char* v = getenv(name);
  return v && *v ? strtol(v, NULL, 10) : def;
}

// Sleeps until the absolute CLOCK_REALTIME time `until_us`, or a signal. Returns 1 on a signal.
static int sleep_until(long long until_us) {
  while (!g_signal) {
    long long left = until_us - now_us();
    if (left <= 0) return 0;
    struct timespec ts = {left / 1000000, (left % 1000000) * 1000};
    if (nanosleep(&ts, NULL) != 0 && errno != EINTR) return 0;
  }
  return 1;
}

// One HTTP/1.1 request `req` to 127.0.0.1:port, the answer (up to size - 1 bytes) into buf.
// Returns 0 and the status in *code on an HTTP answer, -1 otherwise. Bounded: 1 s per socket
// operation (a hung sidecar is a "no").
static int http(int port, const char* req, char* buf, size_t size, int* code) {
  *code = 0;
  buf[0] = 0;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct timeval tv = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  size_t len = strlen(req);
  if (write(fd, req, len) != (ssize_t)len) {
    close(fd);
    return -1;
  }
  size_t n = 0;
  for (;;) {
    ssize_t r = read(fd, buf + n, size - 1 - n);
    if (r <= 0) break;
    n += (size_t)r;
    if (n >= size - 1) break;
  }
  close(fd);
  buf[n] = 0;
  return sscanf(buf, "HTTP/1.%*d %d", code) == 1 ? 0 : -1;
}

// GET /leader; fills code, is_leader, valid_ms, term. Returns 0 on an HTTP answer.
static int ask(int port, int* code, int* is_leader, long* valid_ms, long* term) {
  *is_leader = 0;
  *valid_ms = 0;
  *term = -1;
  char buf[8192];
  if (http(port, "GET /leader HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", buf,
           sizeof buf, code) != 0)
    return -1;
  const char* body = strstr(buf, "\r\n\r\n");
  if (!body || *code != 200) return 0;
  *is_leader = strstr(body, "\"isLeader\":true") != NULL;
  const char* v = strstr(body, "\"validForMs\":");
  if (v) *valid_ms = strtol(v + 13, NULL, 10);
  const char* t = strstr(body, "\"term\":");
  if (t) *term = strtol(t + 7, NULL, 10);
  if (!v) *is_leader = 0;  // a yes without a validity is not a promise
  return 0;
}

int main(int argc, char** argv) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;  // no SA_RESTART: a signal ends the sleep it interrupts
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char* mode = argc > 1 ? argv[1] : "work";
  printf("LHSTART at=%lld mode=%s\n", now_us(), mode);
  if (strcmp(mode, "gated") == 0) {
    while (!g_signal) pause();
    printf("LHEXIT at=%lld sig=%d\n", now_us(), (int)g_signal);
    return 0;
  }
  int port = (int)env_long("LHAPP_PORT", 4040);
  long unit_ms = env_long("LHAPP_UNIT_MS", 100), idle_ms = env_long("LHAPP_IDLE_MS", 20);
  long margin_ms = env_long("LHAPP_MARGIN_MS", 50);
  const char* stop_file = getenv("LHAPP_STOP_FILE");
  const char* stopped_file = getenv("LHAPP_STOPPED_FILE");
  int last_yes = -1;
  while (!g_signal) {
    struct stat st;
    if (stop_file && *stop_file && stat(stop_file, &st) == 0) {
      printf("LHSTOPPED at=%lld\n", now_us());
      if (stopped_file && *stopped_file) {
        int fd = open(stopped_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) close(fd);
      }
      while (!g_signal) pause();
      break;
    }
    int code, yes;
    long valid_ms, term;
    long long t_ask = now_us();
    int rc = ask(port, &code, &yes, &valid_ms, &term);
    long long t_ans = now_us();
    if (rc == 0 && yes && valid_ms > margin_ms) {
      long long start = now_us();
      long long until = start + unit_ms * 1000LL,
                valid_end = t_ask + (valid_ms - margin_ms) * 1000LL;
      int cut = 0;
      if (valid_end < until) {
        until = valid_end;
        cut = 1;
      }
      if (sleep_until(until)) cut = 2;
      printf("LHUNIT ask=%lld ans=%lld term=%ld valid_ms=%ld start=%lld end=%lld cut=%d\n", t_ask,
             t_ans, term, valid_ms, start, now_us(), cut);
      last_yes = 1;
    } else if (last_yes != 0) {
      printf("LHNO ask=%lld ans=%lld code=%d\n", t_ask, t_ans, rc == 0 ? code : -1);
      last_yes = 0;
    }
    sleep_until(now_us() + idle_ms * 1000LL);
  }
  // The work has stopped (any unit was cut above): acknowledge, so that a safe sidecar releases
  // the lock now rather than when the last "yes" it gave runs out.
  char buf[1024];
  int code;
  long long t_ask = now_us();
  int rc = http(port,
                "POST /release HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n"
                "Connection: close\r\n\r\n",
                buf, sizeof buf, &code);
  printf("LHRELEASE ask=%lld ans=%lld code=%d\n", t_ask, now_us(), rc == 0 ? code : -1);
  printf("LHEXIT at=%lld sig=%d\n", now_us(), (int)g_signal);
  return 0;
}
