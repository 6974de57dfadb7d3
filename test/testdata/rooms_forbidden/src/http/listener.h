// Fixture: the listener reaching into the local API.
#include "base/status.h"
#include "localapi/routes.h"  // FORBIDDEN
#include "http/route.h"
