#include "app/install.h"

#include <sys/auxv.h>
#include <unistd.h>

#include <cstdio>

#include "base/file.h"
#include "base/text.h"

namespace leasehold::app {
namespace {

// This binary: /proc/self/exe, the file that runs even if its path was replaced since; else (no
// /proc, as in a bare chroot) the path the kernel was given at exec (AT_EXECFN).
// (An execute-only binary cannot be copied either way.)
std::string SelfPath() {
  char buf[16];
  if (readlink("/proc/self/exe", buf, sizeof buf) > 0) return "/proc/self/exe";
  // getauxval returns the address as an integer: this int-to-pointer cast cannot be avoided.
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  const auto* execfn = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
  return execfn != nullptr ? execfn : "";
}

}  // namespace

std::string ExecutableDir() {
  char buf[4096];
  const std::string self = SelfPath();
  if (self.empty()) return "";
  std::string path = self;
  if (self == "/proc/self/exe") {
    const ssize_t n = readlink(self.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return "";
    path.assign(buf, static_cast<size_t>(n));
  }
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash == 0 ? 1 : slash);
}

Status InstallCopy(const std::string& source, const std::string& dir, const std::string& name) {
  // An exact 0755 whatever the init container's umask: the main container must run it.
  AtomicWriteOptions options;
  options.mode = 0755;
  options.exact_mode = true;
  return CopyFileAtomically(source, dir + "/" + name, options);
}

int RunInstall(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    std::fputs(
        "Usage: leasehold install DIR\n\nCopies this binary to DIR/leasehold atomically "
        "(a temporary file in DIR, then rename), e.g. into an emptyDir from an init "
        "container, so that `leasehold gate` runs in any main image.\n",
        stdout);
    return 0;
  }
  if (args.size() != 1 || args[0].empty() || args[0][0] == '-') {
    std::fprintf(stderr, "leasehold install: usage: leasehold install DIR\n");
    return 2;
  }
  const std::string self = SelfPath();
  const Status st = self.empty()
                        ? Status(Code::kUnavailable, "cannot tell which file this binary is")
                        : InstallCopy(self, args[0], "leasehold");
  if (!st.ok()) {
    std::fprintf(stderr, "leasehold install: %s\n", EscapeForLog(st.message()).c_str());
    return 1;
  }
  std::printf("leasehold installed as %s/leasehold\n", args[0].c_str());
  return 0;
}

}  // namespace leasehold::app
