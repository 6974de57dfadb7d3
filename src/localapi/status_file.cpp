#include "localapi/status_file.h"

#include <spdlog/spdlog.h>

#include "base/file.h"
#include "localapi/leader_doc.h"

namespace leasehold::localapi {

StatusFile::StatusFile(std::string path, const Clock& clock)
    : path_(std::move(path)), clock_(clock) {}

Result<std::unique_ptr<StatusFile>> StatusFile::Create(std::string path, const std::string& initial,
                                                       const Clock& clock) {
  if (path.empty()) return Status(Code::kBadConfig, "must not be empty");
  if (path.back() == '/') return Status(Code::kBadConfig, "\"" + path + "\" names a directory");
  std::unique_ptr<StatusFile> file(new StatusFile(std::move(path), clock));
  if (Status st = file->Write(initial); !st.ok()) return st;
  return file;
}

Status StatusFile::Write(const std::string& content) {
  AtomicWriteOptions options;
  options.durable = false;  // see status_file.h
  return WriteFileAtomically(path_, content + "\n", options);
}

void StatusFile::Publish(const election::Publication& p) {
  Status st = Write(LeaderLine(p.snapshot, clock_));
  if (!st.ok() && !failing_) {
    spdlog::warn("status file: {} (readers see its last content until a write succeeds)",
                 st.message());
  } else if (st.ok() && failing_) {
    spdlog::info("status file {} written again", path_);
  }
  failing_ = !st.ok();
}

}  // namespace leasehold::localapi
