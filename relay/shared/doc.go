// Package shared is the state several relays share: the interfaces of
// the store they coordinate through (Cache, Limiter, and the Dependency
// both are), the token-bucket Rate, Health, which tracks whether a store
// answers, and the coordination itself (Stores): claiming an exchange and
// charging the shared per-target buckets (Claim, Take), streaming another
// relay's exchange (Follow), publishing an owned one (Publisher), and the
// per-client token leases (Leases). The relay maps their results onto its
// own exchanges and counts the Events they report. Several relays behind one load balancer act as one when
// the relay's Config.SharedCache and Config.SharedLimiter point at one
// store (package relay/redisstore implements both). The relay only sees
// these small interfaces; its in-process cache and limits stay in front of
// them and take over whenever the store fails, so a store outage degrades
// sharing, never service.
//
// One upstream exchange across all relays:
//
//	relay A                       store                        relay B
//	Claim(k) ------------------>  k absent: create, owner
//	send UDP, reply arrives
//	Publish(k, replies) ------->  k: [start, reply]  <-------- Claim(k): not owner, entries so far
//	Publish(k, end, ttl) ------>  k: [..., end]; expires ttl   Wait(k, cursor): the rest, then end
//
// The owner publishes in batches: replies wait a few milliseconds for more
// replies or the end of the exchange, so that an exchange that ends soon
// after its reply (the usual case: the asker has what it needs and
// cancels) costs one write to the store, not two.
//
// A relay that claims a key is the only one that queries the game server
// for it until the entry expires; the others stream its replies as they
// come (coalesced) or read them whole (cached). Keys are hashes of the
// relay's cache key (protocol, target, Config.CacheKey of the datagram).
package shared
