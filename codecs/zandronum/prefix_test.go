package zandronum

import (
	"strings"
	"testing"
)

func TestDropPrefixesMatchesReplacer(t *testing.T) {
	rep := strings.NewReplacer("SQF2_", "", "SQF_", "")
	inputs := []string{"", "0", "SQF_NAME|SQF_URL", "SQF2_COUNTRY|0x20", "SQF", "SQF_", "SQF2", "SQF2_",
		"SQF2SQF_", "SQFSQF_X", "SQF_SQF2_SQF_", "xSQF_SQF2__", "SQF3_", "SQF_ALL_DMFLAGS|0x8000"}
	for i, v := 0, uint32(1); i < 200; i, v = i+1, v*2654435761+12345 {
		inputs = append(inputs, Flag(v).String(), Flag2(v).String())
	}
	for _, s := range inputs {
		if got, want := dropPrefixes(s), rep.Replace(s); got != want {
			t.Errorf("dropPrefixes(%q) = %q, want %q", s, got, want)
		}
	}
}
