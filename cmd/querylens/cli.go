package main

import (
	"io"
)

const usage = `querylens - game-server query codecs, browser and relay

usage:
  querylens decode  [-p PROTOCOL] [--query HEX] HEX...   decode one message (- reads datagrams from stdin)
  querylens inspect [-p PROTOCOL] [--query HEX] HEX...   the same, as an annotated field dump
  querylens huffman encode|decode HEX                    Zandronum's Huffman layer
  querylens query   [-p PROTOCOL] [flags] HOST:PORT      query a live server and print the decoded JSON
  querylens master  [-p PROTOCOL] [flags] HOST:PORT      list the servers a master knows
  querylens serve   [flags]                              the web pages and the relay
  querylens demo    [flags]                              emulated game servers on loopback

PROTOCOL is one of the registered protocols; without -p it is detected from the bytes.
Exit status: 0 decoded, 1 the input could not be decoded (the JSON says why), 2 bad usage.
Run "querylens COMMAND -h" for a command's flags.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		io.WriteString(stderr, usage)
		return 2
	}
	switch args[0] {
	case "help", "-h", "--help":
		io.WriteString(stdout, usage)
		return 0
	}
	io.WriteString(stderr, "querylens: unknown command "+args[0]+"\n\n"+usage)
	return 2
}
