package server

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/server/ident"
)

// Ref is the identity of a game server: the protocol it is asked in, its
// address in canonical form, and the query options that change what is
// asked. Options a codec marks Echo (codecs.Option) are not part of it.
//
// It is package ident's Ref (pure, compiled into the browser module too),
// with what needs more than ident may import: the JSON form and the
// history key. Every spelling of a server goes through one parser and one
// formatter:
//
//	status path     /s/zandronum/203.0.113.7:10666?flags=0x1   FromPath, Ref.Path
//	history key     {zandronum 203.0.113.7:10666?flags=0x1}    FromKey, Ref.Key
//	--server flag   zandronum=203.0.113.7:10666?flags=0x1      ParseFlag
//	text            zandronum/203.0.113.7:10666?flags=0x1      Parse, Ref.String
//	JSON            {"protocol":…,"addr":…,"options":{…}}      Ref.UnmarshalJSON
//	CLI argument    -p zandronum -o flags=0x1 203.0.113.7:10666 New with ParseOptionArgs
//
// A Ref made by these functions is valid: the protocol is registered, the
// address is host:port as the relay spells it (wire.ParseTarget, port not
// 0), and the codec's NewQuery accepts the options. Compare Refs with
// String.
type Ref ident.Ref

// Errors of the parsers (package ident's); each is wrapped in a *RefError.
var (
	ErrProtocol = ident.ErrProtocol
	ErrAddr     = ident.ErrAddr
	ErrOptions  = ident.ErrOptions
	ErrRepeated = ident.ErrRepeated
)

// RefError says which spelling of a server did not parse, where and why.
type RefError = ident.Error

// New checks protocol, addr and opts and returns the server's Ref, with
// addr canonical and echo options left out. opts is not kept: the Ref has
// its own map.
func New(protocol, addr string, opts map[string]string) (Ref, error) {
	r, err := ident.New(protocol, addr, opts)
	return Ref(r), err
}

// CanonicalAddr checks a "host:port" and returns it in canonical form
// (ident.CanonicalAddr).
func CanonicalAddr(s string) (string, bool) { return ident.CanonicalAddr(s) }

// ParseQuery reads query options from a URL's raw query ("k=v&k2=v2").
// A key given twice is an error, as is a query that does not parse.
func ParseQuery(raw string) (map[string]string, error) { return ident.ParseQuery(raw) }

// FromValues reads query options from parsed URL values; a key with more
// than one value is an error.
func FromValues(q url.Values) (map[string]string, error) {
	if len(q) == 0 {
		return nil, nil
	}
	opts := make(map[string]string, len(q))
	for k, vs := range q {
		if len(vs) != 1 {
			return nil, &RefError{Part: ident.PartOptions, Input: k, Err: ErrRepeated}
		}
		opts[k] = vs[0]
	}
	return opts, nil
}

// ParseOptionArgs reads the command line's repeated "key=value" options
// (querylens query -o). A key given twice is an error.
func ParseOptionArgs(args []string) (map[string]string, error) {
	var opts map[string]string
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, &RefError{Part: ident.PartOptions, Input: a, Err: errors.New("want key=value")}
		}
		if _, dup := opts[k]; dup {
			return nil, &RefError{Part: ident.PartOptions, Input: k, Err: ErrRepeated}
		}
		if opts == nil {
			opts = map[string]string{}
		}
		opts[k] = v
	}
	return opts, nil
}

// FromPath reads the status page's spelling: the path's {protocol} and
// {target} and the URL's raw query. Each part is checked once.
func FromPath(protocol, target, rawQuery string) (Ref, error) {
	r, err := ident.FromPath(protocol, target, rawQuery)
	return Ref(r), err
}

// ParseFlag reads serve's --server spelling, PROTOCOL=HOST:PORT[?OPTIONS].
func ParseFlag(s string) (Ref, error) {
	r, err := ident.ParseFlag(s)
	return Ref(r), err
}

// Parse reads the text spelling, PROTOCOL/HOST:PORT[?OPTIONS] (String's
// inverse, and the JSON form).
func Parse(s string) (Ref, error) {
	r, err := ident.Parse(s)
	return Ref(r), err
}

// FromKey reads a history key (Ref.Key's inverse). Keys stored before echo
// options were left out of the identity still parse; their echo options
// are dropped.
func FromKey(k history.Key) (Ref, error) {
	r, err := ident.FromKey(k.Protocol, k.Addr)
	return Ref(r), err
}

// Key is the server's history key: its protocol, and its address with the
// identity options as the status page's URL carries them.
func (r Ref) Key() history.Key {
	return history.Key{Protocol: r.Protocol, Addr: ident.Ref(r).KeyAddr()}
}

// String is PROTOCOL/HOST:PORT[?OPTIONS], with the options sorted.
func (r Ref) String() string { return ident.Ref(r).String() }

// Path is the status page's path, /s/{protocol}/{host:port}[?options].
func (r Ref) Path() string { return ident.Ref(r).Path() }

// PathBase is the status page's path without the options, to which a page
// adds a suffix (/badge.svg) before the options.
func (r Ref) PathBase() string { return ident.Ref(r).PathBase() }

// UnmarshalJSON reads the JSON object form and checks it as New does.
func (r *Ref) UnmarshalJSON(b []byte) error {
	var raw struct {
		Protocol string            `json:"protocol"`
		Addr     string            `json:"addr"`
		Options  map[string]string `json:"options"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return &RefError{Part: ident.PartServer, Input: string(b), Err: err}
	}
	v, err := New(raw.Protocol, raw.Addr, raw.Options)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// QueryString is "?k=v&…" for opts, sorted by key and escaped as a URL's
// query, or "" when there are none. History keys on disk are spelt so.
func QueryString(opts map[string]string) string { return ident.QueryString(opts) }

// Codec returns the Ref's codec.
func (r Ref) Codec() (codecs.Codec, error) { return codecs.Lookup(r.Protocol) }
