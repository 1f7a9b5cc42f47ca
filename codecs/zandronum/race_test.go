//go:build race

package zandronum

// The race detector makes sync.Pool drop items at random, so allocation
// counts are not stable under it.
func init() { raceEnabled = true }
