// Package echotest is a protocol made up for the browser module's tests
// (package wasm and its internal packages): the codecs' contract with none
// of a real protocol's detail. Register it with codecs.Register(Codec{}).
package echotest

import (
	"encoding/binary"
	"errors"

	"github.com/querylens/querylens/codecs"
)

// Codec is a protocol made up for tests, so that the browser module's
// boundary is tested on its own: a query is "Q" plus a name to echo; the server answers
// "C" (a challenge) first when the query carries no token, then "R" + name.
type Codec struct{}

func (Codec) Name() string     { return "echotest" }
func (Codec) Title() string    { return "Echo (test)" }
func (Codec) DefaultPort() int { return 7 }
func (Codec) Options() []codecs.Option {
	return []codecs.Option{{Name: "name", Kind: "choice", Default: "a", Choices: []string{"a", "b"}, Help: "what to echo"}}
}

func (Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	switch {
	case len(b) > 0 && b[0] == 'Q':
		return codecs.KindQuery, codecs.Certain
	case len(b) > 0 && b[0] == 'R':
		return codecs.KindResponse, codecs.Certain
	}
	return "", codecs.NotMine
}

func (Codec) CheckQuery(b []byte) error {
	if len(b) == 0 || b[0] != 'Q' {
		return codecs.NewError("echotest", "magic", 0, codecs.ErrNotQuery)
	}
	return nil
}

func (Codec) Decode(dgs [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	b := dgs[0]
	m := &codecs.Message{Protocol: "echotest"}
	if opt.Spans {
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
		m.Spans = []codecs.Span{{Start: 0, End: 1, Field: "magic", Kind: "u8", Value: string(b[:1])}}
	}
	switch {
	case len(b) == 0:
		return m, codecs.NewError("echotest", "magic", 0, codecs.ErrShort)
	case b[0] == 'Q':
		m.Kind = codecs.KindQuery
	case b[0] == 'R':
		m.Kind = codecs.KindResponse
		m.Info = &codecs.Info{Has: codecs.HasName, Name: string(b[1:])}
		m.Fields = codecs.Object{{Key: "name", Value: string(b[1:])}}
		if len(b) < 2 {
			return m, codecs.NewError("echotest", "name", 1, codecs.ErrShort)
		}
	default:
		return m, codecs.NewError("echotest", "magic", 0, codecs.ErrBadMagic)
	}
	if opt.Spans && len(b) > 1 {
		m.Spans = append(m.Spans, codecs.Span{Start: 1, End: len(b), Field: "name", Kind: "bytes", Value: string(b[1:])})
	}
	return m, nil
}

func (Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	name := "a"
	for k, v := range opts {
		if k != "name" {
			return nil, codecs.NewError("echotest", "options."+k, 0, codecs.ErrUnknown)
		}
		name = v
	}
	return &query{name: name}, nil
}

type query struct {
	name  string
	reply []byte
}

func (q *query) Start() [][]byte { return [][]byte{[]byte("Q" + q.name)} }

func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	switch {
	case len(b) == 5 && b[0] == 'C':
		tok := binary.BigEndian.Uint32(b[1:])
		return [][]byte{binary.BigEndian.AppendUint32([]byte("Q"+q.name), tok)}, false, nil
	case len(b) > 0 && b[0] == 'R':
		q.reply = b
		return nil, true, nil
	}
	return nil, false, codecs.NewError("echotest", "reply", 0, errors.New("not mine"))
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if q.reply == nil {
		return &codecs.Message{Protocol: "echotest", Kind: codecs.KindResponse}, codecs.NewError("echotest", "reply", 0, codecs.ErrIncomplete)
	}
	return Codec{}.Decode([][]byte{q.reply}, opt)
}
