package zandronum

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/huffman"
)

// vector is one entry of testdata/vectors.json, a copy of the published
// Zandronum test vectors (docs/protocols/README.md).
type vector struct {
	Name          string         `json:"name"`
	RequestPlain  string         `json:"request_plain_hex"`
	Request       string         `json:"request_hex"`
	ResponsePlain string         `json:"response_plain_hex"`
	Response      string         `json:"response_hex"`
	Expected      map[string]any `json:"expected"`
}

func loadVectors(t testing.TB) []vector {
	b, err := os.ReadFile("testdata/vectors.json")
	noErr(t, "read vectors", err)
	var vs []vector
	noErr(t, "parse vectors", json.Unmarshal(b, &vs))
	return vs
}

// checkExpected compares every key of want with the same key of the fields
// object, through JSON so that numbers compare alike.
func checkExpected(t *testing.T, want map[string]any, fields codecs.Object) {
	t.Helper()
	var got map[string]any
	noErr(t, "fields JSON", json.Unmarshal([]byte(jsonOf(fields)), &got))
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("field %q missing; fields = %s", k, jsonOf(fields))
			continue
		}
		if !reflect.DeepEqual(w, g) {
			t.Errorf("field %q = %v, want %v", k, g, w)
		}
	}
}

func code(p []byte) uint32 { return binary.LittleEndian.Uint32(p) }

func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			if v.RequestPlain != "" && v.ResponsePlain == "" {
				plain, wire := codectest.Unhex(t, v.RequestPlain), codectest.Unhex(t, v.Request)
				equal(t, "huffman.Encode(request)", wire, huffman.Encode(nil, plain))
				if code(plain) == MasterChallenge {
					q, err := DecodeMasterRequest(wire)
					noErr(t, "DecodeMasterRequest", err)
					checkExpected(t, v.Expected, q.Fields())
					equal(t, "AppendMasterRequestPayload", plain, AppendMasterRequestPayload(nil))
					equal(t, "AppendMasterRequest", wire, AppendMasterRequest(nil))
					return
				}
				q, err := DecodeRequest(wire)
				noErr(t, "DecodeRequest", err)
				qp, err := DecodeRequestPayload(plain)
				noErr(t, "DecodeRequestPayload", err)
				equal(t, "wire and payload decode", qp, q)
				checkExpected(t, v.Expected, q.Fields())
				b, err := AppendRequestPayload(nil, q)
				noErr(t, "AppendRequestPayload", err)
				equal(t, "AppendRequestPayload", plain, b)
				b, err = AppendRequest(nil, q)
				noErr(t, "AppendRequest", err)
				equal(t, "AppendRequest", wire, b)
				return
			}
			plain, wire := codectest.Unhex(t, v.ResponsePlain), codectest.Unhex(t, v.Response)
			equal(t, "huffman.Encode(response)", wire, huffman.Encode(nil, plain))
			switch code(plain) {
			case MasterBeginPart, MasterBeginList:
				l, err := DecodeMasterList([][]byte{wire})
				noErr(t, "DecodeMasterList", err)
				lp, err := DecodeMasterListPayloads([][]byte{plain})
				noErr(t, "DecodeMasterListPayloads", err)
				equal(t, "wire and payload decode", lp, l)
				checkExpected(t, v.Expected, l.Fields())
				equal(t, "AppendMasterListPayloads", [][]byte{plain}, AppendMasterListPayloads(nil, l.Servers))
				equal(t, "AppendMasterList", [][]byte{wire}, AppendMasterList(nil, l.Servers))
				return
			}
			r, err := DecodeResponse(wire, nil)
			noErr(t, "DecodeResponse", err)
			rp, err := DecodeResponsePayload(plain, nil)
			noErr(t, "DecodeResponsePayload", err)
			equal(t, "wire and payload decode", rp, r)
			if v.Request != "" {
				q, err := DecodeRequest(codectest.Unhex(t, v.Request))
				noErr(t, "DecodeRequest", err)
				rq, err := DecodeResponse(wire, &q)
				noErr(t, "DecodeResponse with its request", err)
				equal(t, "DecodeResponse with its request", r, rq)
			}
			checkExpected(t, v.Expected, r.Fields())
			if r.Guessed != 0 {
				t.Errorf("Guessed = %b for a stock reply", r.Guessed)
			}
			b, err := AppendResponsePayload(nil, r)
			noErr(t, "AppendResponsePayload", err)
			if !bytes.Equal(b, plain) {
				t.Errorf("AppendResponsePayload:\n got  %x\n want %x", b, plain)
			}
			b, err = AppendResponse(nil, r)
			noErr(t, "AppendResponse", err)
			equal(t, "AppendResponse", wire, b)

			// The codec agrees with the typed API.
			m, err := (&Codec{}).Decode([][]byte{wire}, codecs.DecodeOptions{})
			noErr(t, "Codec.Decode", err)
			checkExpected(t, v.Expected, m.Fields)
		})
	}
}

// TestVectorInfo checks the neutral view of the published replies.
func TestVectorInfo(t *testing.T) {
	want := map[string]string{
		"response: DM server, Doomseeker std flags (team bits stripped, no timeleft, no team byte)": `{"name":"Doom Fest 24/7 | DM","map":"MAP01","game_type":"Deathmatch","version":"3.2.1-r230709-1914 on Linux 6.1.0-18-amd64","password":false,"num_players":4,"max_players":8,"max_clients":16,"players":[{"name":"Alice","score":12,"ping":48,"team":null,"spectator":false,"bot":false},{"name":"Bob","score":-2,"ping":103,"team":null,"spectator":false,"bot":false},{"name":"Crash","score":5,"ping":0,"team":null,"spectator":false,"bot":true},{"name":"Watcher","score":0,"ping":250,"team":null,"spectator":true,"bot":false}]}`,
		"response: CTF server, Doomseeker std flags (team byte, timeleft present, teaminfo)":        `{"name":"CTF Night","map":"CTF01","game_type":"Capture the Flag","version":"3.2.1-r230709-1914 on Linux 6.1.0-18-amd64","password":false,"num_players":4,"max_players":8,"max_clients":16,"players":[{"name":"Red1","score":3,"ping":40,"team":1,"spectator":false,"bot":false},{"name":"Blue1","score":1,"ping":60,"team":0,"spectator":false,"bot":false},{"name":"Blue2","score":0,"ping":80,"team":0,"spectator":false,"bot":true},{"name":"Spec","score":0,"ping":99,"team":null,"spectator":true,"bot":false}],"teams":[{"name":"Blue","score":2},{"name":"Red","score":4}]}`,
	}
	for _, v := range loadVectors(t) {
		w, ok := want[v.Name]
		if !ok {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			m, err := (&Codec{}).Decode([][]byte{codectest.Unhex(t, v.Response)}, codecs.DecodeOptions{})
			noErr(t, "Decode", err)
			if got := string(m.AppendJSON(nil)); !bytes.Contains([]byte(got), []byte(`"info":`+w)) {
				t.Errorf("info:\n got  %s\n want %s", got, w)
			}
		})
	}
}
