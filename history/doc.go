// Package history records how tracked game servers have been doing: one
// sample per server per interval (state, players, bots, max players, map,
// round-trip time), hourly rollups of those samples, and the tracked set
// itself.
//
// The Store interface is the only thing the pages and the sampler use; it
// names no database. sqlstore implements it over database/sql, with the
// schema (sqlstore/schema.go) and the statements (sqlstore/queries.go)
// written once for every dialect: sqlite is the embedded default (one
// file, pure Go), postgres the store several instances share, with a
// Leaser so that one of them samples each server. historytest is the
// conformance suite every implementation runs. Buffered keeps samples in
// memory while a store is down; Tracker keeps the tracked set and samples
// it, with the servers alerts watch pinned in it (Pin: sampled at their
// own interval, whether or not anyone views them, never evicted).
//
// The same database keeps the alerts' watches, with their machine's
// state, and the outbox of messages still to send: package history/outbox
// names that interface (sqlstore implements it too, historytest.RunOutbox
// checks it), package alerts/worker sends the outbox.
//
// Retention: raw samples are kept RawRetention (14 days), hourly rollups
// HourRetention (a year); the 24-hour chart reads raw samples, the 7- and
// 30-day charts read hours.
//
// Adding a column: append a migration step to sqlstore/schema.go (never
// edit a released one; a dialect's own statements go in its Extra at the
// same index), extend the statements in sqlstore/queries.go and their
// scans in sqlstore/store.go, the types in store.go, and a case in
// historytest.
package history
