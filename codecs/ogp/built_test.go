package ogp_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/ogp"
)

// builtSource is the first line of the testdata files written by
// TestBuiltPackets.
const builtSource = "built with this package's encoder (no public capture exists; see ogp.md 'Not established'): "

// built lists the testdata packets made with the encoder, so that every
// field and packet type has a golden dump. -update writes them; otherwise
// the encoder must still produce exactly these bytes.
var built = []struct {
	name, what string
	build      func() ([][]byte, error)
}{
	{"v1_full_answer", "1.0x answer with every field, colour info, UTF-8 and a request id", func() ([][]byte, error) {
		return one(ogp.AppendResponse(nil, full()))
	}},
	{"v1_split_answer", "the 1.0x full answer split at 150 bytes, parts listed out of order (1, 3, 0, 2)", func() ([][]byte, error) {
		parts, err := ogp.SplitResponse(full(), 150)
		if err != nil || len(parts) != 4 {
			return parts, err
		}
		return [][]byte{parts[1], parts[3], parts[0], parts[2]}, nil
	}},
	{"v1_banned", "1.0x error answer 0 (banned)", func() ([][]byte, error) {
		return one(ogp.AppendResponse(nil, ogp.Response{Header: ogp.Header{Type: ogp.TypeError}, ErrorID: ogp.ErrorBanned}))
	}},
	{"v1_invalid_query", "1.0x error answer 4 (invalid query) with a request id and no challenge", func() ([][]byte, error) {
		return one(ogp.AppendResponse(nil, ogp.Response{Header: ogp.Header{Type: ogp.TypeError, HasRequestID: true, RequestID: 9},
			ErrorID: ogp.ErrorInvalidQuery}))
	}},
	{"v1_padded_query", "1.0x query whose HeadSize covers two bytes past the known header fields, asking for a split", func() ([][]byte, error) {
		q := ogp.NewRequest(ogp.V1)
		q.HasChallenge, q.Challenge, q.Split, q.MaxBytesPerPacket = true, 99, true, 500
		q.Padding = []byte{0xaa, 0xbb}
		return one(ogp.AppendRequest(nil, q))
	}},
	{"v1_ping_answer", "1.0x ping answer with a raw body", func() ([][]byte, error) {
		return one(ogp.AppendResponse(nil, ogp.Response{Header: ogp.Header{Type: ogp.TypePing}, Raw: []byte{1, 2}}))
	}},
	{"v004_full_answer", "v0.04 answer with every field the seed defines, Latin-1 text", func() ([][]byte, error) {
		return one(ogp.AppendResponse(nil, full004()))
	}},
	{"v004_split_answer", "the v0.04 full answer split at 100 bytes, in order", func() ([][]byte, error) {
		return ogp.SplitResponse(full004(), 100)
	}},
	{"v004_challenge", "v0.04 header-only None answer carrying the server's challenge number", func() ([][]byte, error) {
		return one(ogp.AppendResponse(nil, ogp.Response{Header: ogp.Header{Version: ogp.V004, Type: ogp.TypePing,
			HasChallenge: true, Challenge: 0x11223344}}))
	}},
	{"v004_banned", "v0.04 Banned answer", func() ([][]byte, error) {
		return one(ogp.AppendResponse(nil, ogp.Response{Header: ogp.Header{Version: ogp.V004, Type: ogp.TypeBanned}}))
	}},
	{"v004_full_query", "v0.04 query asking for everything, challenge 0xFFFFFFFF (asks for a number) and a split", func() ([][]byte, error) {
		q := ogp.NewRequest(ogp.V004)
		q.HasChallenge, q.Challenge, q.Split, q.MaxBytesPerPacket = true, 0xffffffff, true, 1400
		return one(ogp.AppendRequest(nil, q))
	}},
}

func one(b []byte, err error) ([][]byte, error) { return [][]byte{b}, err }

func TestBuiltPackets(t *testing.T) {
	for _, tc := range built {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			if *codectest.Update {
				writePacket(t, tc.name, builtSource+tc.what, got)
				return
			}
			want := readPacket(t, filepath.Join("testdata", tc.name+".hex"))
			if len(got) != len(want.datagrams) {
				t.Fatalf("%d datagrams, want %d", len(got), len(want.datagrams))
			}
			for i := range got {
				if !bytes.Equal(got[i], want.datagrams[i]) {
					t.Errorf("datagram %d:\n got %x\nwant %x", i, got[i], want.datagrams[i])
				}
			}
		})
	}
}
