package gamespy1_test

import (
	"testing"

	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// golden is one testdata/*.hex message (codectest.Message).
type golden = codectest.Message

func goldens(t testing.TB) []golden { return codectest.ReadMessages(t, "testdata/*.hex") }

func readGolden(t testing.TB, path string) golden { return codectest.ReadMessage(t, path) }

// datagrams returns the datagrams of testdata/name.hex.
func datagrams(t testing.TB, name string) [][]byte {
	t.Helper()
	return readGolden(t, "testdata/"+name+".hex").Datagrams
}

// TestGolden decodes every testdata/*.hex message with spans and compares
// the annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). The spans of every datagram that decodes tile it.
func TestGolden(t *testing.T) { codectest.CheckGoldens(t, &gamespy1.Codec{}, goldens(t)) }

// TestTruncated decodes every prefix of every golden datagram, alone and
// in place of itself among the others of its message: none panics, and
// each error is a *codecs.Error at or before the cut.
func TestTruncated(t *testing.T) { codectest.CheckTruncations(t, &gamespy1.Codec{}, goldens(t)) }
