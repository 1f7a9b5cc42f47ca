//go:build race

package relay

// raceEnabled: the race detector slows the relay several times, too much
// for the tests that flood it against real time.
const raceEnabled = true
