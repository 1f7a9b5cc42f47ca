// Package history records how tracked game servers have been doing: one
// sample per server per interval (state, players, bots, max players, map,
// round-trip time), hourly rollups of those samples, and the tracked set
// itself.
//
// The Store interface is the only thing the pages and the sampler use; it
// names no database. sqlstore implements it over database/sql with the
// statements written once for every dialect, and sqlite is the embedded
// default (one file, pure Go). historytest is the conformance suite every
// implementation runs.
//
// Retention: raw samples are kept RawRetention (14 days), hourly rollups
// HourRetention (a year); the 24-hour chart reads raw samples, the 7- and
// 30-day charts read hours.
//
// Adding a column: append a migration to every dialect (never edit a
// released one), extend the statements in sqlstore/queries.go, the types in
// store.go, and a case in historytest.
package history
