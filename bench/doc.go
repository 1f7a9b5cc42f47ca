// Package bench is querylens's measured-speed suite: the decode benchmarks
// that run both natively and compiled to js/wasm on the same packets, the
// packet corpus they share, and the parsing and statistics that turn
// `go test -bench` output into the tables of BENCHMARKS.md.
//
// Nothing here measures speed under a plain `go test ./...`: the tests only
// check that the corpus decodes and that the parser and the statistics are
// right. The measurements run with -bench, or through the driver:
//
//	go tool task bench                      # every measurement, rewrites BENCHMARKS.md
//	go run ./bench/cmd/benchreport -h       # the driver's flags (-only, -count, -servers)
//
// Every table the driver writes states the command that produced it, and
// every absolute number stands next to the baseline measured in the same
// run, with their ratio.
package bench
