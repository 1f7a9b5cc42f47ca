package ident

import (
	"errors"
	"strconv"
)

// Errors of the parsers; each is wrapped in a *Error.
var (
	ErrProtocol = errors.New("unknown protocol")
	ErrAddr     = errors.New("not host:port")
	ErrOptions  = errors.New("bad query options")
	ErrRepeated = errors.New("option given more than once")
	ErrSyntax   = errors.New("not a server's spelling")
)

// The parts of a spelling an Error names.
const (
	PartProtocol = "protocol"
	PartAddr     = "address"
	PartOptions  = "options"
	PartServer   = "server" // the spelling as a whole (no "/" or "=" between protocol and address)
)

// Error says which spelling of a server did not parse, where and why.
type Error struct {
	Part  string // PartProtocol, PartAddr, PartOptions or PartServer
	Input string // the part as given
	Err   error  // one of the Err sentinels, or a *codecs.Error from NewQuery
}

func (e *Error) Error() string {
	return "server: " + e.Part + " " + strconv.Quote(e.Input) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }
