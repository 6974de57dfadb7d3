#include "election/runner.h"

#include "election/elector.h"

namespace leasehold::election {

SnapshotSource Runner::Source() const {
  return [this](Reading reading) { return reading == Reading::kPromise ? Take() : Peek(); };
}

}  // namespace leasehold::election
