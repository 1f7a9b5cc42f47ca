// Package api serves querylens's public JSON API under /api/v1/: the state
// of game servers for scripts, bots and other sites. web.New mounts it;
// openapi.yaml (served at GET /api/v1/openapi.yaml) is the contract, and a
// test validates real responses against it.
//
// # Wire format
//
// Every body is JSON (application/json; charset=utf-8). A server is
// described by one object, server.Summary, whichever endpoint answers:
//
//	{"protocol":"zandronum","address":"203.0.113.7:10666","key":"zandronum/203.0.113.7:10666",
//	 "state":"online","name":"CTF Night","map":"MAP01","game":"CTF","players":3,"bots":1,
//	 "max_players":8,"rtt_seconds":0.012,"at":"2026-11-26T13:30:00Z","source":"query",
//	 "join":"zds://203.0.113.7:10666","status":"/s/zandronum/203.0.113.7:10666"}
//
// state is one of server.States() by name, or "unknown" for a server
// nobody has asked; detail is one sentence for people whenever the state
// is not online; source says where the state comes from: "query" (asked
// now through the relay), "cache" (the relay's shared answer of the last
// few seconds) or "history" (the last recorded sample).
//
// An error is {"error": "…", "field": "…"} with a 4xx status, field naming
// what was wrong ("protocol", "address", "options", "body",
// "servers[3]"); a bad request never panics nor hangs.
//
// # Endpoints
//
//	GET  /api/v1/servers/{protocol}/{host:port}[?options]  one Summary
//	POST /api/v1/servers                                    {"servers":["protocol/host:port?options",…]} → {"servers":[Summary…]}
//	GET  /api/v1/tracked                                    {"generated":…,"servers":[Summary…]} from the history
//	GET  /api/v1/masters/{protocol}/{host:port}[?filter=…]  server.MasterList (mounted by web.New from Config.MasterLists)
//	GET  /api/v1/openapi.yaml                               the OpenAPI 3.1 document
//
// A server is asked exactly as its status page asks it: server.Probe
// through the relay's Exchange, so the relay's policy, cache, coalescing
// and per-target limits apply, bounded by the status page's timeout. The
// batch takes the text spelling of server.Parse (Ref.String's inverse)
// rather than objects: one string per server, the same one the status
// page's path and the history key use. At most MaxBatch servers per
// request; a longer list is refused whole (413) rather than cut, so that
// no server is silently dropped.
//
// # Limits
//
// Each distinct server a request asks takes one token of the visitor's
// limit (Config.Allow: the relay's AllowVisitor, which the status page
// uses too), in request order. A server asked past the limit is answered
// from the relay's cache only (relay.Server.ExchangeCached: nothing is
// sent); if the cache has nothing, its state is "relay-limited" with a
// detail saying so, and the response carries Retry-After. No endpoint
// answers 429: every asked server gets an entry. Asking servers never
// adds them to the tracked set (a script listing hundreds would evict the
// servers people follow).
//
// # Cross-origin use
//
// Every /api/v1 response carries Access-Control-Allow-Origin: *, with no
// credentials: the API reads public state and keeps no session, so a page
// of any site may call it. POST is allowed cross-origin too (OPTIONS
// answers the preflight for GET and POST with Content-Type): a batch asks
// nothing a page could not ask with GETs, and each visitor's limit is
// charged per server either way.
//
// # The admin endpoints
//
// GET, POST /api/v1/watches, DELETE /api/v1/watches/{id} and GET
// /api/v1/outbox/failed (watches.go) keep the alerts' watches in the
// history database, as querylens watch does (package alerts/manage). They
// exist only with Config.AdminToken: a request needs it as a Bearer
// token (401 otherwise, compared in constant time), and without a token
// configured, or with the history off, the paths answer 404 like any
// unknown one. The preflight allows neither Authorization nor DELETE, so
// a page of another site cannot call them. Destinations are shown masked
// (alerts.MaskURL); no answer, error or log line carries a webhook's URL
// token or signing secret.
package api
