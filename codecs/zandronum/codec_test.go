package zandronum

import (
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

func TestRegistered(t *testing.T) {
	c, err := codecs.Lookup("zandronum")
	noErr(t, "Lookup", err)
	equal(t, "title", "Zandronum", c.Title())
	equal(t, "port", 10666, c.DefaultPort())
	names := map[string]string{}
	for _, o := range c.Options() {
		names[o.Name] = o.Default
	}
	equal(t, "options", map[string]string{"flags": "0xfbfb3fff", "flags2": "0x0000001f", "segmented": "true", "time": "0", "master": "false"}, names)
}

func TestDetect(t *testing.T) {
	golden := func(name string) []byte {
		for _, c := range goldenCases {
			if c.name == name {
				return c.build(t)[0]
			}
		}
		t.Fatalf("no golden case %s", name)
		return nil
	}
	for _, tc := range []struct {
		name string
		in   []byte
		kind codecs.Kind
		conf codecs.Confidence
	}{
		{"request", golden("request_doomseeker"), codecs.KindQuery, codecs.Certain},
		{"qstat request", golden("request_qstat"), codecs.KindQuery, codecs.Certain},
		{"reply", golden("response_ctf"), codecs.KindResponse, codecs.Certain},
		{"segment", golden("segmented"), codecs.KindResponse, codecs.Certain},
		{"too soon", golden("denied_ignored"), codecs.KindDenied, codecs.Certain},
		{"master request", golden("master_request"), codecs.KindMasterQuery, codecs.Certain},
		{"legacy master request", golden("master_request_legacy"), codecs.KindMasterQuery, codecs.Likely},
		{"master list", golden("master_single"), codecs.KindMasterList, codecs.Certain},
		{"legacy master list", golden("master_legacy"), codecs.KindMasterList, codecs.Certain},
		{"master refusal", golden("master_denied"), codecs.KindMasterDenied, codecs.Likely},
		{"empty", nil, "", codecs.NotMine},
		{"raw empty", []byte{0xff}, "", codecs.NotMine},
		{"unknown code", Wrap(nil, codectest.Unhex(t, "7a5d5600 00000000")), "", codecs.NotMine},
		{"cut request", Wrap(nil, codectest.Unhex(t, "c7000000 ff1e79")), "", codecs.NotMine},
		{"gamespy2 query", codectest.Unhex(t, "fefd00 43424441 ff ff ff"), "", codecs.NotMine},
		{"ogp query", codectest.Unhex(t, "ffffffff 4f4750 00"), "", codecs.NotMine},
		{"broken list packet", Wrap(nil, codectest.Unhex(t, "06000000 00 08 03 01020304")), "", codecs.NotMine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, conf := (&Codec{}).Detect(tc.in)
			equal(t, "kind", tc.kind, kind)
			equal(t, "confidence", tc.conf, conf)
		})
	}
}

func TestCheckQuery(t *testing.T) {
	req := func(q Request) []byte {
		b, err := AppendRequest(nil, q)
		noErr(t, "AppendRequest", err)
		return b
	}
	for _, tc := range []struct {
		name string
		in   []byte
		err  error
	}{
		{"launcher request", req(Request{Flags: DefaultFlags, Flags2: SQF2_ALL, Segmented: true}), nil},
		{"plain request", req(Request{Flags: SQF_NAME}), nil},
		{"qstat request", req(Request{Flags: SQF_NAME, Extra: []byte{0, 0, 0, 0}}), nil},
		{"master request", AppendMasterRequest(nil), nil},
		{"legacy master request", Wrap(nil, codectest.Unhex(t, "c7000000")), nil},
		{"too many extra bytes", req(Request{Flags: SQF_NAME, Extra: make([]byte, 5)}), codecs.ErrTrailing},
		{"cut request", Wrap(nil, codectest.Unhex(t, "c7000000 01000000")), codecs.ErrShort},
		{"cut flags2", Wrap(nil, codectest.Unhex(t, "c7000000 00000080 00000000 1f00")), codecs.ErrShort},
		{"master request, wrong version", Wrap(nil, codectest.Unhex(t, "7c5d5600 0300")), codecs.ErrBadValue},
		{"master request with extra", Wrap(nil, codectest.Unhex(t, "7c5d5600 0200 00")), codecs.ErrTrailing},
		{"a reply", vectorDatagram(vecCTF, "response")(t)[0], codecs.ErrTooLong},
		{"a refusal", Wrap(nil, codectest.Unhex(t, "185d5600 01000000")), codecs.ErrNotQuery},
		// The longest request a client sends (MaxRequestPayload), in the
		// raw Huffman form (MaxQueryLen), and one byte more.
		{"longest request, raw form", append([]byte{0xff}, codectest.Unhex(t, "c7000000 ffffff80 01000000 ffffffff 02")...), nil},
		{"one byte more, raw form", append([]byte{0xff}, codectest.Unhex(t, "c7000000 ffffff80 01000000 ffffffff 02 00")...), codecs.ErrTooLong},
		{"one byte more, huffman form", Wrap(nil, codectest.Unhex(t, "c7000000 01000080 00000000 00000000 02 00")), codecs.ErrTooLong},
		{"a list", AppendMasterList(nil, nil)[0], codecs.ErrNotQuery},
		{"empty payload", Wrap(nil, nil), codecs.ErrShort},
		{"garbage huffman", []byte{0x00, 0xff}, codecs.ErrHuffman},
		{"nothing", nil, codecs.ErrHuffman},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Codec{}).CheckQuery(tc.in)
			if tc.err == nil {
				noErr(t, "CheckQuery", err)
				return
			}
			codecErr(t, "CheckQuery", err, tc.err, "", "-")
		})
	}
}

func TestDecodeKinds(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			m, err := (&Codec{}).Decode(c.build(t), codecs.DecodeOptions{})
			noErr(t, "Decode", err)
			want := map[string]codecs.Kind{
				"request": codecs.KindQuery, "response": codecs.KindResponse, "denied": codecs.KindDenied,
				"segmented": codecs.KindResponse, "master_request": codecs.KindMasterQuery,
				"master_single": codecs.KindMasterList, "master_multi": codecs.KindMasterList,
				"master_legacy": codecs.KindMasterList, "master_denied": codecs.KindMasterDenied,
			}
			for prefix, k := range want {
				if len(c.name) >= len(prefix) && c.name[:len(prefix)] == prefix {
					equal(t, "kind", k, m.Kind)
				}
			}
			if c.name == "request_qstat" {
				equal(t, "warnings", []string{codecs.WarnTrailing}, m.Warnings)
			}
		})
	}
	t.Run("legacy huffman form", func(t *testing.T) {
		// 00 alone is the raw form ff 00 only for the legacy encoder.
		m, err := (&Codec{}).Decode([][]byte{codectest.Unhex(t, "ff 785d5600 01000000")}, codecs.DecodeOptions{})
		noErr(t, "Decode", err)
		if len(m.Warnings) != 0 {
			t.Errorf("current raw form warned: %v", m.Warnings)
		}
		p := codectest.Unhex(t, "7c5d56000200")
		m, err = (&Codec{}).Decode([][]byte{append([]byte{0xff}, p...)}, codecs.DecodeOptions{})
		noErr(t, "Decode", err)
		equal(t, "warnings", []string{codecs.WarnLegacyHuffman}, m.Warnings)
	})
	t.Run("mixed set", func(t *testing.T) {
		_, err := (&Codec{}).Decode([][]byte{AppendMasterDenied(nil, 3), AppendMasterDenied(nil, 4)}, codecs.DecodeOptions{})
		codecErr(t, "Decode", err, codecs.ErrBadValue, "response", "payload 0")
	})
	t.Run("huffman error", func(t *testing.T) {
		m, err := (&Codec{}).Decode([][]byte{{0x00, 0xff}}, codecs.DecodeOptions{Spans: true})
		codecErr(t, "Decode", err, codecs.ErrHuffman, "huffman", "wire")
		equal(t, "layers", 1, len(m.Layers))
	})
	t.Run("unknown code", func(t *testing.T) {
		_, err := (&Codec{}).Decode([][]byte{Wrap(nil, codectest.Unhex(t, "01020304"))}, codecs.DecodeOptions{})
		codecErr(t, "Decode", err, codecs.ErrUnknownCode, "response", "payload")
	})
	t.Run("a segment is not a reply", func(t *testing.T) {
		_, err := DecodeResponsePayload(segPayload(0, 1, 0, 0, 0, nil), nil)
		codecErr(t, "DecodeResponsePayload", err, codecs.ErrUnknownCode, "response", "")
	})
}

// feed runs datagrams through q and returns whether it completed.
func feed(t *testing.T, q codecs.Query, ds ...[]byte) (done bool, errs []error) {
	t.Helper()
	for _, d := range ds {
		send, ok, err := q.Feed(d)
		if len(send) != 0 {
			t.Errorf("Feed asked to send %d datagrams", len(send))
		}
		done = ok
		if err != nil {
			errs = append(errs, err)
		}
	}
	return done, errs
}

func TestQuery(t *testing.T) {
	newQuery := func(opts map[string]string) (*query, Request) {
		c, err := (&Codec{}).NewQuery(opts)
		noErr(t, "NewQuery", err)
		q := c.(*query)
		start := q.Start()
		equal(t, "datagrams", 1, len(start))
		if q.master {
			return q, Request{}
		}
		req, err := DecodeRequest(start[0])
		noErr(t, "start is a request", err)
		return q, req
	}
	reply := func(t *testing.T, req Request) Response {
		r := teamReply(ModeCTF, SQF_GAMETYPE|SQF_NUMPLAYERS|SQF_PLAYERDATA|SQF_ALL_DMFLAGS|SQF_SECURITY_SETTINGS, false)
		r.Time = req.Time
		return r
	}

	t.Run("defaults", func(t *testing.T) {
		_, req := newQuery(nil)
		equal(t, "flags", DefaultFlags, req.Flags)
		equal(t, "flags2", SQF2_ALL, req.Flags2)
		equal(t, "segmented", true, req.Segmented)
		// The same question is the same bytes (a page sends it ahead of
		// its decoder, and its conversation takes it over by its bytes).
		equal(t, "time", uint32(0), req.Time)
		_, req2 := newQuery(nil)
		equal(t, "second query", req, req2)
	})
	t.Run("options", func(t *testing.T) {
		_, req := newQuery(map[string]string{"flags": "0x19", "flags2": "2", "segmented": "false", "time": "77"})
		equal(t, "request", Request{Flags: 0x19, Time: 77}, req)
	})
	t.Run("bad options", func(t *testing.T) {
		for _, o := range []map[string]string{{"flags": "x"}, {"segmented": "maybe"}, {"colour": "1"}, {"time": "-1"}} {
			_, err := (&Codec{}).NewQuery(o)
			codecErr(t, "NewQuery", err, codecs.ErrBadValue, "", "-")
		}
	})
	t.Run("single reply", func(t *testing.T) {
		q, req := newQuery(map[string]string{"segmented": "false"})
		r := reply(t, req)
		// A reply echoing another time (shared by a relay's cache) answers too.
		shared := r
		shared.Time++
		b, _ := AppendResponse(nil, shared)
		done, errs := feed(t, q, AppendMasterDenied(nil, 3), b)
		equal(t, "done", true, done)
		equal(t, "ignored", 1, len(errs))
		m, err := q.Result(codecs.DecodeOptions{})
		noErr(t, "Result", err)
		equal(t, "kind", codecs.KindResponse, m.Kind)
		equal(t, "players", 2, len(m.Info.Players))
	})
	t.Run("segments out of order, one twice", func(t *testing.T) {
		q, req := newQuery(nil)
		r := extendedResponse()
		r.Time = req.Time
		ds, err := AppendSegmented(nil, r, 100)
		noErr(t, "AppendSegmented", err)
		var in [][]byte
		for i := len(ds) - 1; i >= 0; i-- {
			in = append(in, ds[i])
			if i == 2 {
				in = append(in, ds[i])
			}
		}
		done, errs := feed(t, q, in[:len(in)-1]...)
		equal(t, "done before the last", false, done)
		equal(t, "errors", 0, len(errs))
		_, err = q.Result(codecs.DecodeOptions{})
		codecErr(t, "Result before the last", err, codecs.ErrIncomplete, "segments", "")
		done, _ = feed(t, q, in[len(in)-1])
		equal(t, "done", true, done)
		m, err := q.Result(codecs.DecodeOptions{Spans: true})
		noErr(t, "Result", err)
		equal(t, "name", "Café Deathmatch", m.Info.Name)
	})
	t.Run("segment disagreeing", func(t *testing.T) {
		q, req := newQuery(nil)
		r := extendedResponse()
		r.Time = req.Time
		ds, _ := AppendSegmentedPayloads(nil, r, 100)
		feed(t, q, Wrap(nil, ds[1]))
		_, errs := feed(t, q, Wrap(nil, segPayload(2, 9, 0, 0, 0, nil)))
		equal(t, "ignored", 1, len(errs))
	})
	t.Run("nothing received", func(t *testing.T) {
		q, _ := newQuery(nil)
		m, err := q.Result(codecs.DecodeOptions{})
		codecErr(t, "Result", err, codecs.ErrIncomplete, "reply", "")
		equal(t, "protocol", Protocol, m.Protocol)
	})
	t.Run("master list", func(t *testing.T) {
		q, _ := newQuery(map[string]string{"master": "true"})
		equal(t, "start", [][]byte{AppendMasterRequest(nil)}, q.Start())
		servers := multiServers(300, 1)
		ds := AppendMasterList(nil, servers)
		done, errs := feed(t, q, ds[2], ds[0], ds[2])
		equal(t, "done", false, done)
		equal(t, "errors", 0, len(errs))
		done, _ = feed(t, q, ds[1])
		equal(t, "done", true, done)
		m, err := q.Result(codecs.DecodeOptions{})
		noErr(t, "Result", err)
		equal(t, "kind", codecs.KindMasterList, m.Kind)
		equal(t, "servers", len(servers), len(m.Servers))
		equal(t, "first", "198.51.0.0:10666", m.Servers[0])
	})
	for _, tc := range []struct {
		name   string
		opts   map[string]string
		reply  func(req Request) []byte
		kind   codecs.Kind
		denied string
	}{
		{"banned", nil, func(req Request) []byte {
			b, _ := AppendResponse(nil, Response{Code: CodeBanned, Time: req.Time})
			return b
		}, codecs.KindDenied, codecs.DeniedBanned},
		{"master refusal", map[string]string{"master": "true"}, func(Request) []byte {
			return AppendMasterDenied(nil, MasterIgnored)
		}, codecs.KindMasterDenied, codecs.DeniedRateLimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, req := newQuery(tc.opts)
			done, _ := feed(t, q, tc.reply(req))
			equal(t, "done", true, done)
			m, err := q.Result(codecs.DecodeOptions{})
			noErr(t, "Result", err)
			equal(t, "kind", tc.kind, m.Kind)
			equal(t, "denied", tc.denied, m.Denied)
		})
	}
	t.Run("master ignores a launcher reply", func(t *testing.T) {
		q, _ := newQuery(map[string]string{"master": "true"})
		_, errs := feed(t, q, vectorDatagram(vecCTF, "response")(t)[0], []byte{0x00, 0xff})
		equal(t, "ignored", 2, len(errs))
		for _, err := range errs {
			var e *codecs.Error
			if !errors.As(err, &e) {
				t.Errorf("%v is not a *codecs.Error", err)
			}
		}
	})
}

// TestQueryAcceptsSharedReply feeds a segmented reply built for another
// query's time, as a relay's cache hands it out, and expects it to complete
// the query.
func TestQueryAcceptsSharedReply(t *testing.T) {
	c, _ := codecs.Lookup("zandronum")
	q, err := c.NewQuery(map[string]string{"time": "111"})
	if err != nil {
		t.Fatal(err)
	}
	resp := Response{Code: CodeAccepted, Time: 999, Version: "v", Flags: SQF_NAME, Name: "shared"}
	segs, err := AppendSegmented(nil, resp, 20)
	if err != nil || len(segs) < 2 {
		t.Fatalf("segments: %d, %v", len(segs), err)
	}
	done := false
	for i := len(segs) - 1; i >= 0; i-- { // out of order too
		_, done, err = q.Feed(segs[i])
		if err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
	}
	if !done {
		t.Fatal("not done after every segment")
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Info == nil || m.Info.Name != "shared" {
		t.Fatalf("result %+v, %v", m, err)
	}
}
