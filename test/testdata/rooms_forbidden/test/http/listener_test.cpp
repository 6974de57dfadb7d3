// Fixture: the listener's tests reaching for an election type.
#include "fakes/fake_clock.h"
#include "http/listener.h"
#include "election/elector.h"  // FORBIDDEN
