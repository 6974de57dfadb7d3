// Fixture: the gate reading the election's publication instead of the contract.
#include "gate/gate.h"

#include "contract/leader.h"
#include "election/publisher.h"  // FORBIDDEN
