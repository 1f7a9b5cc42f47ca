// Package masters keeps the lists of the master servers whose lists the
// querylens server keeps (server.MasterSpec.Kept: Steam's A2S master,
// Quake III's masters, GameSpy v1's and Zandronum's), and serves them as server.MasterList JSON at
// GET /api/v1/masters/{protocol}/{host:port}?filter=….
//
// Why the server and not the page: Steam's master answers about thirty
// requests a minute from one address and lists in pages of 231 addresses,
// so a page per visitor paging through it would be throttled at once;
// one list kept by the server serves every visitor.
//
// How a list is kept:
//
//	first request ──> fetch starts; the request waits up to FirstWait and
//	                  answers with what came (Complete false while paging)
//	fetch:  Pacer.Reserve(master) ─ wait ─> one request through the relay's
//	        Exchange (its policy applies) ─> one page ─> next seed ─> …
//	        until 0.0.0.0:0 (Steam), EOT (Quake III), MaxEntries, or the
//	        master stops answering (the list keeps what came, with Error)
//	later requests ──> the last list at once; a refresh starts when the
//	                   last fetch started Refresh (5 min) ago or more
//
// Pacing is per master address, at most one request per DefaultInterval
// (2 s): in-process with LocalPacer, across instances with SharedPacer (a
// token bucket per address in the relay's shared store, Redis). With a
// Steam Web API key a Steam master's list comes from
// IGameServersService/GetServerList instead, in one request.
//
// Listing never asks a game server: each entry's state is the last one
// the StateSource knows (CacheStates: the relay's cached answer, played
// through the protocol's conversation with relay.Server.Peek; then
// HistoryStates: the history's last sample), "refused" when the relay's
// policy would not query the address, else "unknown". Entries that cannot be
// servers (0.0.0.0, port 0, multicast, broadcast, repeats) are dropped.
//
// A master spoken to over TCP (MasterDescription.Transport: GameSpy v1's,
// which speaks first with a challenge) is asked over a connection of its
// own (ExchangeStream, tcp.go), not through the relay, whose UDP path
// cannot carry it: the same pacing, the relay's policy on every address
// the master's name resolves to, StreamTimeout (5 s) per conversation.
//
// Zandronum's master answers an address once per 10 s (it ignores the
// relay's address in between), so its list is kept too, in one
// conversation of a few packets. Quake II's and QuakeWorld's masters are
// not kept: their list is one datagram the page asks through the relay,
// and the handler answers 404 for them, saying so.
package masters
