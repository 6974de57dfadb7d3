// Fixture: locks may include election/lock.h and election/record.h, not the elector.
#include "election/elector.h"  // FORBIDDEN
#include "election/lock.h"
#include "election/record.h"
#include "kube/api_client.h"
