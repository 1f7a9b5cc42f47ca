package batch

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/internal/toyproto"
	"github.com/querylens/querylens/wasm/internal/echotest"
)

// tb is the table the tests share, as the browser module shares one.
var tb Table

func TestMain(m *testing.M) {
	codecs.Register(echotest.Codec{})
	toyproto.RegisterTCP()
	os.Exit(m.Run())
}

// Request encoders for batch, as web/static/relay.js writes them.
func reqOpenBytes(protocol string, opts ...string) []byte {
	b := append([]byte{reqOpen, byte(len(protocol))}, protocol...)
	b = append(b, byte(len(opts)/2))
	for i := 0; i+1 < len(opts); i += 2 {
		b = append(append(b, byte(len(opts[i]))), opts[i]...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(opts[i+1])))
		b = append(b, opts[i+1]...)
	}
	return b
}

func reqStepBytes(h int, d string) []byte {
	b := binary.BigEndian.AppendUint32([]byte{reqStep}, uint32(h))
	b = binary.BigEndian.AppendUint32(b, uint32(len(d)))
	return append(b, d...)
}

func reqFinishBytes(h int) []byte { return binary.BigEndian.AppendUint32([]byte{reqFinish}, uint32(h)) }

// runJS runs one batch of requests on tb.
func runJS(t *testing.T, reqs ...[]byte) string {
	t.Helper()
	return string(tb.Run(nil, bytes.Join(reqs, nil)))
}

// TestBatch is the worker's path: conversations opened, stepped once per
// reply (released once complete) and finished after a timeout, many per
// call, with the handles the first batch gave.
func TestBatch(t *testing.T) {
	h := tb.next + 1
	got := runJS(t, reqOpenBytes("echotest", "name", "b"), reqOpenBytes("echotest"),
		reqOpenBytes("nosuch"), reqOpenBytes("echotest", "bogus", "1"))
	want := `[{"handle":` + strconv.Itoa(h) + `,"send":["5162"]},{"handle":` + strconv.Itoa(h+1) + `,"send":["5161"]},` +
		`{"error":{"protocol":"nosuch","field":"protocol","offset":0,"message":"unknown protocol"}},` +
		`{"error":{"protocol":"echotest","field":"options.bogus","offset":0,"message":"unknown protocol"}}]`
	if got != want {
		t.Fatalf("open ×4:\n got %s\nwant %s", got, want)
	}
	got = runJS(t, reqStepBytes(h, "C\x00\x00\x01\x02"), reqStepBytes(h+1, "Ra"))
	want = `[{"send":["516200000102"],"done":false},{"send":[],"done":true,"summary":{"kind":"response","row":["a","","",0,0,0,false,"","a\n\n",false,"",""]}}]`
	if got != want {
		t.Errorf("step ×2:\n got %s\nwant %s", got, want)
	}
	got = runJS(t, reqStepBytes(h+1, "Ra"), reqStepBytes(h, "junk"), reqStepBytes(h, "Rb"), reqFinishBytes(h))
	want = `[{"error":{"message":"conversation is closed"}},` +
		`{"send":[],"done":false,"error":{"protocol":"echotest","field":"reply","offset":0,"message":"not mine"}},` +
		`{"send":[],"done":true,"summary":{"kind":"response","row":["b","","",0,0,0,false,"","b\n\n",false,"",""]}},` +
		`{"error":{"message":"conversation is closed"}}]`
	if got != want {
		t.Errorf("step after done, stray, reply, finish:\n got %s\nwant %s", got, want)
	}
	// A server that never answers: finish gives the summary and releases.
	h = tb.next + 1
	runJS(t, reqOpenBytes("echotest"))
	if got := runJS(t, reqFinishBytes(h), reqFinishBytes(h)); !strings.Contains(got, `"message":"incomplete message"`) ||
		!strings.HasSuffix(got, `,{"error":{"message":"conversation is closed"}}]`) {
		t.Errorf("finish twice = %s", got)
	}
	if tb.Len() != 0 {
		t.Errorf("%d conversations left open", tb.Len())
	}
}

// TestBatchBadRequests: a request batch cannot read ends the batch with an
// error naming it and its offset; what came before it ran.
func TestBatchBadRequests(t *testing.T) {
	h := tb.next + 1
	for _, tc := range []struct {
		name string
		reqs [][]byte
		want string
	}{
		{"empty", nil, `[]`},
		{"unknown type", [][]byte{reqFinishBytes(999), {0x7f, 1, 2}}, `[{"error":{"message":"conversation is closed"}},{"error":{"message":"batch: unknown request type 0x7f at offset 5"}}]`},
		{"step past the end", [][]byte{reqStepBytes(1, "abc")[:8]}, `[{"error":{"message":"batch: STEP request at offset 0 is truncated"}}]`},
		{"hostile step length", [][]byte{{reqStep, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 'R'}}, `[{"error":{"message":"batch: STEP request at offset 0 is truncated"}}]`},
		{"open options past the end", [][]byte{reqOpenBytes("echotest", "name", "b")[:14]}, `[{"error":{"message":"batch: OPEN request at offset 0 is truncated"}}]`},
		{"finish cut", [][]byte{{reqFinish, 0, 0}}, `[{"error":{"message":"batch: FINISH request at offset 0 is truncated"}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runJS(t, tc.reqs...); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	if tb.next+1 != h || tb.Len() != 0 {
		t.Errorf("bad batches opened conversations: next handle %d (was %d), %d open", tb.next+1, h, tb.Len())
	}
}

// FuzzBatch: no request buffer makes batch panic, and its answer is
// always one JSON array.
func FuzzBatch(f *testing.F) {
	f.Add(bytes.Join([][]byte{reqOpenBytes("echotest", "name", "b"), reqStepBytes(1, "Rb"), reqFinishBytes(2)}, nil))
	f.Add([]byte{reqStep, 0, 0, 0, 1, 0, 0, 0, 2, 'R', 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		var tb Table
		got := tb.Run(nil, b)
		var v []any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatalf("Run(%x) = %s, not a JSON array: %v", b, got, err)
		}
	})
}
