package demo

import (
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ase"
)

// TestASE runs a conversation against each emulated ASE server in memory:
// the reply decodes, names the server, counts the players it lists; the
// flags server lists one player for each combination of the six bits,
// each with exactly the fields its bits select.
func TestASE(t *testing.T) {
	now := time.Unix(1_780_000_000, 0)
	for _, f := range []ASEFlavor{ASEMTA, ASEFarCry, ASEFlags} {
		t.Run(strconv.Itoa(int(f)), func(t *testing.T) {
			h := NewASE(4, f, Normal)
			m, err := converse(t, ase.Protocol, nil, h, now)
			if err != nil {
				t.Fatal(err)
			}
			in := m.Info
			if in.Name != reportedName(ase.Protocol, nil, h) || in.Name == "" || len(in.Players) != in.NumPlayers || len(m.Warnings) != 0 {
				t.Errorf("info %+v, warnings %q", in, m.Warnings)
			}
			if f != ASEFlags {
				return
			}
			ps, _ := m.Fields.Get("players")
			seen := map[int]bool{}
			for _, p := range ps.([]codecs.Object) {
				v, _ := p.Get("flags")
				flags := int(v.(uint8))
				seen[flags] = true
				if len(p) != 1+popcount(flags) {
					t.Errorf("flags %#x: fields %v", flags, p)
				}
			}
			if len(seen) != 64 {
				t.Errorf("%d flag combinations, want 64", len(seen))
			}
		})
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// TestASETruncated: a truncated server's reply is taken and fails to
// decode, naming a field.
func TestASETruncated(t *testing.T) {
	_, err := converse(t, ase.Protocol, nil, NewASE(4, ASEMTA, Truncated), time.Unix(1_780_000_000, 0))
	if e, ok := err.(*codecs.Error); !ok || e.Field == "" {
		t.Errorf("err = %v", err)
	}
}
