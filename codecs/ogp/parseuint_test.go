package ogp

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseUintMatchesLowerCasePrefix(t *testing.T) {
	old := func(s string, bits int) (uint64, error) {
		if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
			return strconv.ParseUint(h, 16, bits)
		}
		return strconv.ParseUint(s, 10, bits)
	}
	for _, s := range []string{"", "0", "0x", "0X", "0xff", "0XFF", "0xFf", "0Xfffffffff", "12", "1_0", "0x1_0",
		"0x\u0130", "0\u212a1", "\u212a", "0xg", "0x-1", "-1", "+1", "00x1", "0b1", "0o7", "0xffff", "0x10000", "65536"} {
		for _, bits := range []int{16, 32} {
			a, errA := parseUint(s, bits)
			b, errB := old(s, bits)
			if a != b || (errA == nil) != (errB == nil) {
				t.Errorf("parseUint(%q, %d) = %d, %v; want %d, %v", s, bits, a, errA, b, errB)
			}
		}
	}
}
