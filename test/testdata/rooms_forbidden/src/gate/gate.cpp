// Fixture: the gate reading the election's publication instead of the contract.
#include "contract/leader.h"
#include "gate/gate.h"
#include "localapi/publisher.h"  // FORBIDDEN
