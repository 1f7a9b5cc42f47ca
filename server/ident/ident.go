package ident

import (
	"errors"
	"strconv"

	"github.com/querylens/querylens/codecs"
)

// Ref is the identity of a game server. Compare Refs with String.
type Ref struct {
	Protocol string            `json:"protocol"`          // a registered codec name
	Addr     string            `json:"addr"`              // "host:port", canonical
	Options  map[string]string `json:"options,omitempty"` // identity options; nil for the protocol's defaults
}

// New checks protocol, addr and opts and returns the server's Ref, with
// addr canonical and echo options left out. opts is not kept.
func New(protocol, addr string, opts map[string]string) (Ref, error) {
	c, target, err := check(protocol, addr)
	if err != nil {
		return Ref{}, err
	}
	return build(c, target, opts)
}

// check looks protocol up and puts addr in canonical form.
func check(protocol, addr string) (codecs.Codec, string, error) {
	c, err := codecs.Lookup(protocol)
	if err != nil {
		return nil, "", &Error{Part: PartProtocol, Input: protocol, Err: ErrProtocol}
	}
	target, ok := CanonicalAddr(addr)
	if !ok {
		return nil, "", &Error{Part: PartAddr, Input: addr, Err: ErrAddr}
	}
	return c, target, nil
}

// build is the Ref of a checked codec and address, once the codec accepts
// opts.
func build(c codecs.Codec, target string, opts map[string]string) (Ref, error) {
	// NewConversation: a protocol whose query carries its target is asked
	// with the Ref's address in its options, filled in where it is asked.
	if _, _, err := codecs.NewConversation(c, opts); err != nil {
		return Ref{}, &Error{Part: PartOptions, Input: QueryString(opts)[min(1, len(opts)):], Err: err}
	}
	r := Ref{Protocol: c.Name(), Addr: target}
	for k, v := range opts {
		if echo(c, k) {
			continue
		}
		if r.Options == nil {
			r.Options = make(map[string]string, len(opts))
		}
		r.Options[k] = v
	}
	return r, nil
}

// echo reports whether option name of c only echoes (codecs.Option.Echo).
func echo(c codecs.Codec, name string) bool {
	for _, o := range c.Options() {
		if o.Name == name {
			return o.Echo
		}
	}
	return false
}

// FromPath reads the status page's spelling: the path's {protocol} and
// {target} and the URL's raw query.
func FromPath(protocol, target, rawQuery string) (Ref, error) {
	c, addr, err := check(protocol, target)
	if err != nil {
		return Ref{}, err
	}
	opts, err := ParseQuery(rawQuery)
	if err != nil {
		return Ref{}, err
	}
	return build(c, addr, opts)
}

// ParseFlag reads serve's --server spelling, PROTOCOL=HOST:PORT[?OPTIONS].
func ParseFlag(s string) (Ref, error) {
	proto, rest, ok := cut(s, '=')
	if !ok {
		return Ref{}, &Error{Part: PartServer, Input: s, Err: errors.New("want PROTOCOL=HOST:PORT[?OPTION=VALUE&...]")}
	}
	return parseRest(proto, rest)
}

// Parse reads the text spelling, PROTOCOL/HOST:PORT[?OPTIONS] (String's
// inverse).
func Parse(s string) (Ref, error) {
	proto, rest, ok := cut(s, '/')
	if !ok {
		return Ref{}, &Error{Part: PartServer, Input: s, Err: errors.New("want PROTOCOL/HOST:PORT[?OPTION=VALUE&...]")}
	}
	return parseRest(proto, rest)
}

func parseRest(proto, rest string) (Ref, error) {
	addr, raw, _ := cut(rest, '?')
	return FromPath(proto, addr, raw)
}

// FromKey reads a history key's protocol and address (KeyAddr's inverse).
// Keys stored before echo options were left out of the identity still
// parse; their echo options are dropped.
func FromKey(protocol, addr string) (Ref, error) {
	return parseRest(protocol, addr)
}

// KeyAddr is the address part of the server's history key: its address
// with the identity options as the status page's URL carries them.
func (r Ref) KeyAddr() string { return r.Addr + QueryString(r.Options) }

// String is PROTOCOL/HOST:PORT[?OPTIONS], with the options sorted.
func (r Ref) String() string { return r.Protocol + "/" + r.KeyAddr() }

// Path is the status page's path, /s/{protocol}/{host:port}[?options].
func (r Ref) Path() string { return r.PathBase() + QueryString(r.Options) }

// PathBase is the status page's path without the options, to which a page
// adds a suffix (/badge.svg) before the options. A canonical address needs
// no escaping in a path: it is letters, digits, '.', '-', '_', ':' and
// brackets.
func (r Ref) PathBase() string { return "/s/" + r.Protocol + "/" + r.Addr }

// HostPort reads an address a person typed: spaces around it are dropped,
// and defaultPort (when not 0) is added when it has no port. It returns
// the address in canonical form.
func HostPort(text string, defaultPort int) (string, error) {
	addr := trimSpace(text)
	if defaultPort != 0 && addr != "" && lastIndex(addr, ':') <= lastIndex(addr, ']') {
		addr += ":" + strconv.Itoa(defaultPort)
	}
	target, ok := CanonicalAddr(addr)
	if !ok {
		return "", &Error{Part: PartAddr, Input: trimSpace(text), Err: ErrAddr}
	}
	return target, nil
}
