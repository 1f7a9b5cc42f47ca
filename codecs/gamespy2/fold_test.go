package gamespy2

import (
	"strings"
	"testing"
)

func TestFoldEqualMatchesEqualFold(t *testing.T) {
	inputs := []string{"", "t", "true", "TRUE", "True", "tRuE", "true ", " true", "truee", "tru",
		"yes", "YES", "yeS", "ye\u017f", "YE\u017f", "ye\u017fs", "ye\u212a", "\u212aes",
		"tru\xff", "\xff", "ye\xc5", "ye\xc5\xbf", "ye\xc5\xbe", "yes\x00", "ÿes", "1", "0", "no",
		"y\u0130s", "tr\u00fce", "trUe", "yEs", "t\u0280ue", "yes\u017f"}
	for _, s := range inputs {
		for _, want := range []string{"true", "yes"} {
			if got, exp := foldEqual(s, want), strings.EqualFold(s, want); got != exp {
				t.Errorf("foldEqual(%q, %q) = %v, strings.EqualFold says %v", s, want, got, exp)
			}
		}
	}
	for c := 0; c < 256; c++ {
		for _, want := range []string{"true", "yes"} {
			for i := range len(want) {
				s := want[:i] + string(rune(c)) + want[i+1:]
				if got, exp := foldEqual(s, want), strings.EqualFold(s, want); got != exp {
					t.Errorf("foldEqual(%q, %q) = %v, strings.EqualFold says %v", s, want, got, exp)
				}
				s = want[:i] + string([]byte{byte(c)}) + want[i+1:]
				if got, exp := foldEqual(s, want), strings.EqualFold(s, want); got != exp {
					t.Errorf("foldEqual(%q, %q) = %v, strings.EqualFold says %v", s, want, got, exp)
				}
			}
		}
	}
}
