// Command querylens decodes, inspects and sends game-server query packets,
// and serves the querylens web pages and relay. See the README and
// ../shared/spec/json.md for the command-line contract.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
