// Command querylens decodes, inspects and sends game-server query packets,
// and serves the querylens web pages and relay. docs/cli.md states the
// command-line contract (output JSON, exit statuses); the golden files
// under testdata/ pin it.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
