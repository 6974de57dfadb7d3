// Fixture: app may include localapi, but app/probe has its own, narrower row.
#include "app/probe.h"

#include "contract/loopback_client.h"
#include "localapi/routes.h"  // FORBIDDEN
