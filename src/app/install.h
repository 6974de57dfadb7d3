// `leasehold install DIR`: this binary copied into a directory (an emptyDir, from an init
// container), so that `leasehold gate` runs in any main image; and where this binary lives, for
// the gate's default status file.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace leasehold::app {

// `leasehold install DIR`: copies this binary to DIR/leasehold atomically (a temporary file in
// DIR, then rename) and exits 0; 1 with one line when it cannot, 2 for bad arguments.
int RunInstall(const std::vector<std::string>& args);

// Copies `source` to `dir`/`name` with base's CopyFileAtomically, mode exactly 0755.
Status InstallCopy(const std::string& source, const std::string& dir, const std::string& name);

// The directory of /proc/self/exe ("" when unknown).
std::string ExecutableDir();

}  // namespace leasehold::app
