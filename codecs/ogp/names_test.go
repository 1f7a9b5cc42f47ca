package ogp

import "testing"

func TestBitNamesTables(t *testing.T) {
	for _, tb := range []*bitNames{headNames1, headNames004, requestNames1, requestNames004, infoNames, modNames,
		mapNames, teamNames1, teamNames004, playerNames004, playerNames1, addOnNames, playerFlagNames, addOnFlagNames,
		serverFlagNames004, serverFlagNames1, limitNames1} {
		var seen Bits
		for _, p := range tb.pairs {
			if p.bit == 0 || p.bit&(p.bit-1) != 0 || seen&p.bit != 0 || p.name == "" {
				t.Errorf("pair %v %q: want one new bit and a name", p.bit, p.name)
			}
			seen |= p.bit
		}
		if tb.known() != seen {
			t.Errorf("known = %#x, want %#x", tb.known(), seen)
		}
	}
	if got := playerNames004.name(21); got != "3.0" {
		t.Errorf("v0.04 player field 3.0 = %q", got)
	}
	if got := playerNames1.name(21); got != "address" {
		t.Errorf("1.0x player field 3.0 = %q", got)
	}
}
