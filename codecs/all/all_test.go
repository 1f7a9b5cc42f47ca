package all_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
)

// start returns the cache key of the first datagram of c.NewQuery(opts):
// the query with the fields that only echo back (time, id, token) made
// neutral, so two queries built from equal options compare equal.
func start(t *testing.T, c codecs.Codec, opts map[string]string) ([]byte, error) {
	t.Helper()
	q, err := c.NewQuery(opts)
	if err != nil {
		return nil, err
	}
	return codecs.QueryKey(c.Name(), q.Start()[0]), nil
}

// TestUintOptionsDecimal: a "uint" option means the same in every
// protocol: "0600" is six hundred (not octal 384), as is "600" and "0x258".
func TestUintOptionsDecimal(t *testing.T) {
	n := 0
	for _, c := range codecs.Protocols() {
		for _, o := range c.Options() {
			if o.Kind != codecs.OptionUint {
				continue
			}
			n++
			t.Run(c.Name()+"/"+o.Name, func(t *testing.T) {
				want, wantErr := start(t, c, map[string]string{o.Name: "600"})
				for _, v := range []string{"0600", "0x258"} {
					got, err := start(t, c, map[string]string{o.Name: v})
					if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
						t.Errorf("%s=%s gives % x, %v; %s=600 gives % x, %v", o.Name, v, got, err, o.Name, want, wantErr)
					}
				}
			})
		}
	}
	if n < 4 {
		t.Fatalf("only %d uint options registered", n)
	}
}

// TestOptionErrors: every protocol reports a bad or unknown option the
// same way: a *codecs.Error whose Field is "options.NAME", wrapping
// ErrBadValue.
func TestOptionErrors(t *testing.T) {
	for _, c := range codecs.Protocols() {
		bad := map[string]string{"no_such_option": "1"}
		for _, o := range c.Options() {
			bad[o.Name] = "not-a-value" // no kind accepts it, but text
			if o.Kind == codecs.OptionText {
				bad[o.Name] = "no\x00text" // a control byte, which no query can carry
			}
		}
		for name, v := range bad {
			t.Run(c.Name()+"/"+name, func(t *testing.T) {
				_, err := c.NewQuery(map[string]string{name: v})
				e, ok := errors.AsType[*codecs.Error](err)
				if !ok || e.Protocol != c.Name() || e.Field != "options."+name || e.Offset != 0 || !errors.Is(err, codecs.ErrBadValue) {
					t.Errorf("NewQuery(%s=%s) = %v; want options.%s wrapping ErrBadValue", name, v, err, name)
				}
			})
		}
	}
}
