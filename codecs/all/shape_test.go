package all_test

import (
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/ase"
	"github.com/querylens/querylens/codecs/bloodmasters"
	"github.com/querylens/querylens/codecs/doom3"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/codecs/gamespy2"
	"github.com/querylens/querylens/codecs/gamespy3"
	"github.com/querylens/querylens/codecs/mumble"
	"github.com/querylens/querylens/codecs/ogp"
	"github.com/querylens/querylens/codecs/quake2"
	"github.com/querylens/querylens/codecs/quake3"
	"github.com/querylens/querylens/codecs/samp"
	"github.com/querylens/querylens/codecs/unreal2"
	"github.com/querylens/querylens/codecs/zandronum"
)

// The protocol packages share one shape; a package that drifts from
// it stops this file from compiling.
var (
	_ codecs.Codec = (*a2s.Codec)(nil)
	_ codecs.Codec = (*ase.Codec)(nil)
	_ codecs.Codec = (*bloodmasters.Codec)(nil)
	_ codecs.Codec = (*doom3.Codec)(nil)
	_ codecs.Codec = (*gamespy1.Codec)(nil)
	_ codecs.Codec = (*gamespy3.Codec)(nil)
	_ codecs.Codec = (*quake2.Codec)(nil)
	_ codecs.Codec = (*quake3.Codec)(nil)
	_ codecs.Codec = (*gamespy2.Codec)(nil)
	_ codecs.Codec = (*ogp.Codec)(nil)
	_ codecs.Codec = (*zandronum.Codec)(nil)
	_ codecs.Codec = (*unreal2.Codec)(nil)

	_              = [...]string{a2s.Protocol, ase.Protocol, bloodmasters.Protocol, doom3.Protocol, gamespy1.Protocol, gamespy2.Protocol, gamespy3.Protocol, mumble.Protocol, ogp.Protocol, quake2.Protocol, quake3.Protocol, samp.Protocol, samp.ProtocolVCMP, unreal2.Protocol, zandronum.Protocol}
	_              = [...]int{a2s.MaxQueryLen, ase.MaxQueryLen, bloodmasters.MaxQueryLen, doom3.MaxQueryLen, gamespy1.MaxQueryLen, gamespy2.MaxQueryLen, gamespy3.MaxQueryLen, mumble.MaxQueryLen, ogp.MaxQueryLen, quake2.MaxQueryLen, quake3.MaxQueryLen, samp.MaxQueryLen, unreal2.MaxQueryLen, zandronum.MaxQueryLen}
	_ codecs.Codec = (*mumble.Codec)(nil)
	_ codecs.Codec = (*samp.Codec)(nil)

	_ func([]byte, a2s.Request) ([]byte, error)      = a2s.AppendRequest
	_ func([]byte, gamespy1.Request) ([]byte, error) = gamespy1.AppendRequest
	_ func([]byte, gamespy3.Request) ([]byte, error) = gamespy3.AppendRequest
	_ func([]byte, quake3.Request) ([]byte, error)   = quake3.AppendRequest
	_ func([]byte, doom3.Request) ([]byte, error)    = doom3.AppendRequest
	_ func([]byte, unreal2.Request) ([]byte, error)  = unreal2.AppendRequest
	_ func([]byte, mumble.Request) ([]byte, error)   = mumble.AppendRequest
	_ func([]byte, samp.Request) ([]byte, error)     = samp.AppendRequest

	_ func([]byte) (a2s.Request, error)      = a2s.DecodeRequest
	_ func([]byte) (gamespy1.Request, error) = gamespy1.DecodeRequest
	_ func([]byte) (gamespy3.Request, error) = gamespy3.DecodeRequest
	_ func([]byte) (quake3.Request, error)   = quake3.DecodeRequest
	_ func([]byte) (doom3.Request, error)    = doom3.DecodeRequest
	_ func([]byte) (unreal2.Request, error)  = unreal2.DecodeRequest
	_ func([]byte) (mumble.Request, error)   = mumble.DecodeRequest
	_ func([]byte) (samp.Request, error)     = samp.DecodeRequest

	_ func([]byte, *a2s.Request) (a2s.Response, error)           = a2s.DecodeResponse
	_ func([]byte, *gamespy1.Request) (gamespy1.Response, error) = gamespy1.DecodeResponse
	_ func([]byte, *gamespy3.Request) (gamespy3.Response, error) = gamespy3.DecodeResponse
	_ func([]byte, *quake3.Request) (quake3.Response, error)     = quake3.DecodeResponse
	_ func([]byte, *doom3.Request) (doom3.Response, error)       = doom3.DecodeResponse
	_ func([]byte, *unreal2.Request) (unreal2.Response, error)   = unreal2.DecodeResponse
	_ func([]byte, *mumble.Request) (mumble.Response, error)     = mumble.DecodeResponse
	_ func([]byte, *samp.Request) (samp.Response, error)         = samp.DecodeResponse

	_ func([]byte, ase.Request) ([]byte, error)          = ase.AppendRequest
	_ func([]byte, bloodmasters.Request) ([]byte, error) = bloodmasters.AppendRequest
	_ func([]byte, gamespy2.Request) ([]byte, error)     = gamespy2.AppendRequest
	_ func([]byte, ogp.Request) ([]byte, error)          = ogp.AppendRequest
	_ func([]byte, zandronum.Request) ([]byte, error)    = zandronum.AppendRequest

	_ func([]byte) (ase.Request, error)          = ase.DecodeRequest
	_ func([]byte) (bloodmasters.Request, error) = bloodmasters.DecodeRequest
	_ func([]byte) (gamespy2.Request, error)     = gamespy2.DecodeRequest
	_ func([]byte) (ogp.Request, error)          = ogp.DecodeRequest
	_ func([]byte) (zandronum.Request, error)    = zandronum.DecodeRequest

	_ func([]byte, *ase.Request) (ase.Response, error)                   = ase.DecodeResponse
	_ func([]byte, *bloodmasters.Request) (bloodmasters.Response, error) = bloodmasters.DecodeResponse
	_ func([]byte, *gamespy2.Request) (gamespy2.Response, error)         = gamespy2.DecodeResponse
	_ func([]byte, *ogp.Request) (ogp.Response, error)                   = ogp.DecodeResponse
	_ func([]byte, *zandronum.Request) (zandronum.Response, error)       = zandronum.DecodeResponse
)

// TestRegisteredAs: each package registers its own Codec under its
// Protocol name.
func TestRegisteredAs(t *testing.T) {
	for _, want := range []codecs.Codec{&a2s.Codec{}, &ase.Codec{}, &bloodmasters.Codec{}, &doom3.Codec{}, &gamespy1.Codec{}, &gamespy2.Codec{}, &gamespy3.Codec{}, &mumble.Codec{}, &ogp.Codec{}, &quake2.Codec{}, &quake3.Codec{}, &samp.Codec{}, &unreal2.Codec{}, &zandronum.Codec{}} {
		got, err := codecs.Lookup(want.Name())
		if err != nil || got.Name() != want.Name() {
			t.Errorf("Lookup(%q) = %v, %v", want.Name(), got, err)
		}
	}
}

// TestErrorsAlike: every protocol fails the same way where the failure
// does not depend on the protocol: a message is always returned (never
// nil) with the error, and the error names the same field.
func TestErrorsAlike(t *testing.T) {
	for _, c := range codecs.Protocols() {
		t.Run(c.Name(), func(t *testing.T) {
			m, err := c.Decode(nil, codecs.DecodeOptions{})
			checkFailure(t, "Decode(no datagram)", c, m, err, "datagrams", codecs.ErrIncomplete)
			q, err := c.NewQuery(nil)
			if err != nil {
				t.Fatal(err)
			}
			m, err = q.Result(codecs.DecodeOptions{})
			checkFailure(t, "Result before a reply", c, m, err, "reply", codecs.ErrIncomplete)
			if _, done, err := q.Feed([]byte{1}); done || err == nil {
				t.Errorf("Feed(one byte) = done %v, %v; want an error, not done", done, err)
			} else if _, ok := errors.AsType[*codecs.Error](err); !ok {
				t.Errorf("Feed(one byte): %v is not a *codecs.Error", err)
			}
			m, err = q.Result(codecs.DecodeOptions{})
			checkFailure(t, "Result after a datagram ignored", c, m, err, "reply", codecs.ErrIncomplete)
		})
	}
}

func checkFailure(t *testing.T, what string, c codecs.Codec, m *codecs.Message, err error, field string, sentinel error) {
	t.Helper()
	if m == nil || m.Protocol != c.Name() {
		t.Errorf("%s: message %+v; want a partial message of %s", what, m, c.Name())
	}
	e, ok := errors.AsType[*codecs.Error](err)
	if !ok || e.Protocol != c.Name() || e.Field != field || !errors.Is(err, sentinel) {
		t.Errorf("%s: %v; want a *codecs.Error at %q wrapping %v", what, err, field, sentinel)
	}
}
