// Fixture: the listener's tests reaching for an election type.
#include "http/listener.h"

#include "election/elector.h"  // FORBIDDEN
#include "fakes/fake_clock.h"
