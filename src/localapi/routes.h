// The local API's one route table. For each route it says its path, the
// methods it takes, whether the probe listener shows it, whether its answer is a promise, whether
// it reads a snapshot at all, its handler and its line of `leasehold --help`. Everything else
// reads it: the router (which route, looked up once per request: which snapshot to take, which
// path streams), Handle() (404 and 405), the 404 bodies' endpoint lists and the help text of both
// listeners. The table, the lookup and the help text are in routes.cpp; the handlers it names in
// handler.cpp. test/localapi/routes_test.cpp pins what it decides.
#pragma once

#include <string>
#include <vector>

#include "localapi/handler.h"

namespace leasehold::localapi {

// The methods a route takes; any other method gets 405 with an Allow header.
enum class Methods {
  kGet,   // GET and HEAD (Allow: GET, HEAD)
  kPost,  // POST only (Allow: POST)
};

// Whether an answer on this route can tell the caller "you lead", so that a `safe` release must
// wait until it has run out (see election::Reading).
enum class Promise {
  kNone,    // never: the snapshot is peeked
  kAnswer,  // on the main listener, the answer's snapshot is taken as a promise (Elector::Take),
            // before the method is judged (a refused method promises too: more promise than
            // needed only makes a safe release wait longer). The probe listener's never is.
  kStream,  // a watch stream (the hub, on the main listener): every event is one, taken by the
            // publisher (publisher.cpp); a HEAD or a refused method is none
};

struct Route {
  const char* path;  // exact, decoded, without the query string
  Methods methods;
  // The probe listener (--probe-address, reachable on the pod IP) shows it; every other route
  // is 404 there, whatever the method or the peer.
  bool on_probe;
  Promise promise;
  // False: the router takes no snapshot for it, so that a flood of these requests never waits
  // for the elector's lock (/metrics reads atomics only).
  bool reads_snapshot;
  http::Answer (*handler)(const RouteRequest&);
  // Only when this is set in the options (nullptr: always): a route without what it serves is
  // 404, as if it did not exist.
  bool (*enabled)(const HandlerOptions&);
  // Another path for the route above it ("/" for "/leader"): on its line of --help, and not in
  // the 404 bodies' endpoint lists.
  bool alias;
  // Its text in --help, lines separated by '\n'; nullptr: it is named on the line of the route
  // above it (an alias after a comma, another route after a space).
  const char* help;
};

// Every route, in the order of --help and of the 404 bodies' endpoint lists.
const std::vector<Route>& Routes();

// The route of `path`, nullptr when there is none.
const Route* FindRoute(const std::string& path);

// Whether the listener with `options` shows `route` (its probe_only and the route's enabled).
bool Shown(const Route& route, const HandlerOptions& options);

// The endpoints a 404 names: every route but aliases, on the probe listener only its own,
// comma-separated in table order.
std::string EndpointList(bool probe_only);

// The probe listener's endpoints for prose, in table order: "/a, /b and /c" (--probe-address's
// help).
std::string ProbeEndpoints();

// The "Local API" lines of `leasehold --help`, one per route (or group of routes), each
// newline-terminated: "  LABEL  TEXT", LABEL padded to the longest, "POST " before a POST route.
std::string RoutesHelp();

}  // namespace leasehold::localapi
