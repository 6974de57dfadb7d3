// The gate's process tree: CMD as its child in a process group of its own, the gate as child
// subreaper, so that every descendant CMD leaves behind (a daemon that called setsid, say) is
// re-parented to the gate and can still be signalled and reaped.
//
// Never kill(-1): under shareProcessNamespace it would reach the sidecar and every other
// container. Signals go to CMD's process group and to the gate's own children, one by one.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace leasehold::gate {

// PR_SET_CHILD_SUBREAPER on the calling process. As PID 1 it is implied.
Status BecomeSubreaper();

// fork + exec of argv (PATH searched) with `env` as its whole environment. In the child before
// exec: its own process group, PR_SET_PDEATHSIG = SIGKILL (and exit at once if the gate is
// already gone), every signal disposition back to default (SIGPIPE is ignored by leasehold), an
// empty signal mask. A failed exec exits 127 (not found) or 126, with one line on stderr.
// Returns the pid, which is also the process group id.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env);

// The caller's environment with `name`=`value` set (replaced if present).
std::vector<std::string> EnvironWith(const std::string& name, const std::string& value);

// Pids whose parent is `parent`, from /proc/<pid>/stat; with each one's process group.
struct ChildProcess {
  pid_t pid;
  pid_t pgid;
};
std::vector<ChildProcess> ChildrenOf(pid_t parent);

// `signo` to process group `pgid` while it may still exist (the leader not yet reaped, or one
// of our children still in it), then to every child of this process. Returns how many kill()s
// reached a process.
int SignalTree(pid_t pgid, bool leader_reaped, int signo);

struct Reaped {
  bool main_exited = false;  // `main_pid` was reaped in this call
  int main_status = 0;       // its waitpid status
  int others = 0;            // other children reaped (orphans re-parented to the gate)
  bool none_left = false;    // waitpid said ECHILD: no child at all remains
};
// Reaps every child that has exited, without blocking.
Reaped ReapChildren(pid_t main_pid);

}  // namespace leasehold::gate
