// Fixture: the listener reaching into the local API.
#include "base/status.h"
#include "http/route.h"
#include "localapi/routes.h"  // FORBIDDEN
