#include "gate/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace leasehold::gate {
namespace {

// /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses, so
// the fields are read after the last ')'.
bool ReadStat(const char* pid_dir, pid_t* ppid, pid_t* pgrp) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/stat", pid_dir);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  (void)close(fd);  // read-only /proc file: a failed close loses nothing
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');
  if (!close_paren) return false;
  char state = 0;
  int pp = 0, pg = 0;
  if (std::sscanf(close_paren + 1, " %c %d %d", &state, &pp, &pg) != 3) return false;
  *ppid = pp;
  *pgrp = pg;
  return true;
}

}  // namespace

Status BecomeSubreaper() {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    return Status(Code::kUnavailable,
                  std::string("prctl(PR_SET_CHILD_SUBREAPER): ") + std::strerror(errno));
  }
  return Status();
}

std::vector<std::string> EnvironWith(const std::string& name, const std::string& value) {
  std::vector<std::string> env;
  const std::string prefix = name + "=";
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env.emplace_back(*e);
  }
  env.push_back(prefix + value);
  return env;
}

Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  if (argv.empty()) return Status(Code::kFailedPrecondition, "no command");
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string not_found = "leasehold gate: cannot run " + argv[0] + ": ";
  const pid_t parent = getpid();

  const pid_t pid = fork();
  if (pid < 0) return Status(Code::kUnavailable, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    // The gate may have died between fork and prctl: then nobody would ever kill us.
    if (getppid() != parent) _exit(125);
    for (int s = 1; s < NSIG; ++s) {
      if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(args[0], args.data(), envp.data());
    const int err = errno;
    const char* why = strerror(err);
    ssize_t ignored = write(2, not_found.data(), not_found.size());
    ignored = write(2, why, std::strlen(why));
    ignored = write(2, "\n", 1);
    (void)ignored;
    _exit(err == ENOENT ? 127 : 126);
  }
  // Also from the parent, so that the group exists before the first signal is sent to it.
  setpgid(pid, pid);
  return pid;
}

std::vector<ChildProcess> ChildrenOf(pid_t parent) {
  std::vector<ChildProcess> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    pid_t ppid = 0, pgrp = 0;
    if (ReadStat(e->d_name, &ppid, &pgrp) && ppid == parent) {
      out.push_back(ChildProcess{static_cast<pid_t>(std::atoi(e->d_name)), pgrp});
    }
  }
  closedir(d);
  return out;
}

int SignalTree(pid_t pgid, bool leader_reaped, int signo) {
  const std::vector<ChildProcess> children = ChildrenOf(getpid());
  bool group_alive = pgid > 0 && !leader_reaped;
  for (const ChildProcess& c : children) group_alive = group_alive || (pgid > 0 && c.pgid == pgid);
  int reached = 0;
  // pgid > 0 always here: kill(-1) or kill(0) would reach far more than CMD.
  if (group_alive && kill(-pgid, signo) == 0) ++reached;
  for (const ChildProcess& c : children) {
    if (c.pid > 1 && kill(c.pid, signo) == 0) ++reached;
  }
  return reached;
}

Reaped ReapChildren(pid_t main_pid) {
  Reaped r;
  for (;;) {
    int status = 0;
    const pid_t p = waitpid(-1, &status, WNOHANG);
    if (p > 0) {
      if (p == main_pid) {
        r.main_exited = true;
        r.main_status = status;
      } else {
        ++r.others;
      }
      continue;
    }
    if (p == 0) break;
    if (errno == EINTR) continue;
    r.none_left = true;  // ECHILD
    break;
  }
  return r;
}

}  // namespace leasehold::gate
