// --status-file: the /leader JSON in a file, for a main container that would rather read a file
// (e.g. on a shared emptyDir) than speak HTTP. Rewritten on every publication, i.e. on every
// change and on every renew while this replica leads.
//
// Each write goes through base's WriteFileAtomically (a temporary file in the same directory,
// renamed over the path), so a reader sees the old content or the new one, never a mix. No fsync
// (AtomicWriteOptions::durable false): the file describes a running process and means nothing
// after a crash of the node, and a write on every renew should not wait for the disk.
//
// A reader must treat a validUntil in the past as "not leader": a frozen or killed agent
// cannot take back what it wrote.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "election/publisher.h"

namespace leasehold::localapi {

class StatusFile final : public election::PublicationSink {
 public:
  // Writes `initial` (e.g. the "not read yet" state) at once, so a bad path fails at start and
  // a file left by an earlier run no longer claims leadership. The error message says why,
  // without naming the flag. Publications are rendered on `clock`, which must outlive the file.
  static Result<std::unique_ptr<StatusFile>> Create(std::string path, const std::string& initial,
                                                    const Clock& clock);

  // Replaces the file's content with `content` (a newline is appended).
  Status Write(const std::string& content);

  const std::string& path() const { return path_; }

  // PublicationSink: writes the publication's /leader line, rendered now (validForMs counted
  // from the write); logs a failed write once per run of failures.
  void Publish(const election::Publication& p) override;
  // The file tells its readers "you lead": every publication is taken as a promise.
  bool HandsOutLeadership() const override { return true; }

 private:
  StatusFile(std::string path, const Clock& clock);

  const std::string path_;
  const Clock& clock_;
  bool failing_ = false;
};

}  // namespace leasehold::localapi
