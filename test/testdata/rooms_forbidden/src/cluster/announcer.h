// Fixture: the announcer hearing of leadership from the local API instead of the election.
#pragma once

#include "election/publisher.h"
#include "localapi/watch_hub.h"  // FORBIDDEN
#include "locks/lock_type.h"
