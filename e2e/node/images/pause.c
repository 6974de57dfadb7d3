// The pod sandbox's pause process, FROM scratch: sleeps until SIGTERM/SIGINT, reaps nothing
// (no shared PID namespace in the node tier's pods).
#include <signal.h>
#include <unistd.h>

static void on_signal(int sig) { _exit(sig == SIGTERM || sig == SIGINT ? 0 : 2); }

int main(void) {
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  for (;;) pause();
}
