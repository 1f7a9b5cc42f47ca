package zandronum

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// goldenCase is one message under testdata: name.hex holds its datagrams
// (one a line, as received), name.golden the annotated dump and the JSON.
// build makes the datagrams, from a published vector or with this
// package's builders; the .hex file is checked against it (or rewritten
// with -update), so a change in a builder shows up as a diff.
type goldenCase struct {
	name   string
	source string
	build  func(t testing.TB) [][]byte
	query  func(t testing.TB) []byte // the request a reply answers, if any
	// request: a prefix that keeps the fixed fields still decodes (the
	// optional byte may be absent), so only shorter prefixes must fail.
	request int
}

func vectorDatagram(name, field string) func(t testing.TB) [][]byte {
	return func(t testing.TB) [][]byte {
		for _, v := range loadVectors(t) {
			if v.Name == name {
				h := v.Response
				if field == "request" {
					h = v.Request
				}
				return [][]byte{codectest.Unhex(t, h)}
			}
		}
		t.Fatalf("no vector %q", name)
		return nil
	}
}

const (
	vecRequest = "request: Doomseeker standard query flags"
	vecDM      = "response: DM server, Doomseeker std flags (team bits stripped, no timeleft, no team byte)"
	vecCTF     = "response: CTF server, Doomseeker std flags (team byte, timeleft present, teaminfo)"
	vecDenied  = "response: denied, query too soon (5660024) + echoed time"
	vecMaster  = "master request (LAUNCHER_MASTER_CHALLENGE 5660028 + version 2)"
	vecList    = "master response: single packet list (3 IP blocks)"
)

const vectorSource = "published vector spec/vectors/zandronum.json: "

// extendedResponse is a reply with every field, deprecated ones and SQF2
// included, in a team mode, with Latin-1 and colour escapes in names.
func extendedResponse() Response {
	return Response{
		Code: CodeAccepted, Time: 0x01020304, Version: "3.3-alpha-r251030-1200 on Linux 6.12.0",
		Flags: SQF_ALL, Name: "Café Deathmatch", URL: "https://example.org/wads/", Email: "ops@example.org",
		Map: "MAP07", MaxClients: 32, MaxPlayers: 16, PWADs: []string{"zdctf.pk3", "opt.wad"},
		GameMode: ModeTeamPlay, Instagib: 0, Buckshot: 1, GameName: "DOOM II", IWAD: "doom2.wad",
		ForcePassword: 1, ForceJoinPassword: 0, Skill: 4, BotSkill: 2,
		DMFlags:    [3]uint32{0x40004, 0x200, 0x10},
		Limits:     Limits{FragLimit: 50, TimeLimit: 15, TimeLeft: 7, DuelLimit: 0, PointLimit: 0, WinLimit: 3},
		TeamDamage: 0.5, TeamScores: [2]int16{12, -3}, NumPlayers: 3,
		Players: []Player{
			{Name: "\x1c[Gold]Boss\x1cR", Score: 12, Ping: 31, Team: TeamBlue, Minutes: 44},
			{Name: "Zoë", Score: -3, Ping: 999, Bot: 1, Team: TeamRed, Minutes: 2},
			{Name: "lurker", Spectator: 1, Team: NoTeam, Ping: 80},
		},
		TeamByte: true, NumTeams: 2,
		Teams:   []Team{{Name: "Blue", Color: 0x0000ff, Score: 12}, {Name: "Red", Color: 0xff0000, Score: -3}},
		Testing: 1, TestingName: "downloads/testing/3.3/ZandroDev3.3-251030windows.zip",
		AllDMFlags: []uint32{262148, 512, 16, 0, 64, 0}, Security: 1, OptionalWADs: []uint8{1},
		DEH:    []string{"fix.deh"},
		Flags2: SQF2_ALL, PWADHashes: []string{"0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"},
		Country: "XIP", GameModeName: "Team Deathmatch", GameModeShort: "TDM", VoiceChat: 1,
	}
}

// multiServers returns n IPs with k ports each, in the master's order.
func multiServers(n, k int) []Addr {
	var s []Addr
	for i := range n {
		for j := range k {
			s = append(s, Addr{IP: [4]byte{198, 51, byte(i / 200), byte(i % 200)}, Port: uint16(10666 + j)})
		}
	}
	return s
}

func permute(ds [][]byte, order ...int) [][]byte {
	out := make([][]byte, len(order))
	for i, k := range order {
		out[i] = ds[k]
	}
	return out
}

var goldenCases = []goldenCase{
	{name: "request_doomseeker", source: vectorSource + vecRequest, build: vectorDatagram(vecRequest, "request"), request: requestFixed},
	{name: "request_extended_segmented", source: "built by AppendRequest: DefaultFlags, SQF2_ALL, segmented",
		request: requestFixed + 4,
		build: func(t testing.TB) [][]byte {
			b, err := AppendRequest(nil, Request{Flags: DefaultFlags, Flags2: SQF2_ALL, Time: 0x01020304, Segmented: true})
			noErr(t, "AppendRequest", err)
			return [][]byte{b}
		}},
	{name: "request_qstat", source: "hand-built: qstat's request, a zero flags2 without SQF_EXTENDED_INFO",
		request: requestFixed,
		build: func(t testing.TB) [][]byte {
			return [][]byte{Wrap(nil, codectest.Unhex(t, "c7000000 ff1e7900 2b1c3a5f 00000000"))}
		}},
	{name: "response_dm", source: vectorSource + vecDM, build: vectorDatagram(vecDM, "response")},
	{name: "response_ctf", source: vectorSource + vecCTF, build: vectorDatagram(vecCTF, "response"),
		query: func(t testing.TB) []byte { return vectorDatagram(vecCTF, "request")(t)[0] }},
	{name: "response_extended", source: "built by AppendResponse: every SQF and SQF2 field, team mode, Latin-1 and colour escapes",
		build: func(t testing.TB) [][]byte {
			b, err := AppendResponse(nil, extendedResponse())
			noErr(t, "AppendResponse", err)
			return [][]byte{b}
		}},
	{name: "denied_ignored", source: vectorSource + vecDenied, build: vectorDatagram(vecDenied, "response")},
	{name: "denied_banned", source: "built by AppendResponse: 5660025",
		build: func(t testing.TB) [][]byte {
			b, err := AppendResponse(nil, Response{Code: CodeBanned, Time: 1597643819})
			noErr(t, "AppendResponse", err)
			return [][]byte{b}
		}},
	{name: "segmented", source: "built by AppendSegmented: the extended reply, sv_maxpacketsize 200, received in the order 2, 0, 1",
		build: func(t testing.TB) [][]byte {
			ds, err := AppendSegmented(nil, extendedResponse(), 200)
			noErr(t, "AppendSegmented", err)
			if len(ds) != 3 {
				t.Fatalf("%d segments, want 3", len(ds))
			}
			return permute(ds, 2, 0, 1)
		}},
	{name: "master_request", source: vectorSource + vecMaster, build: vectorDatagram(vecMaster, "request")},
	{name: "master_request_legacy", source: "hand-built: the legacy LONG 199 alone, sent to a master",
		build: func(t testing.TB) [][]byte { return [][]byte{Wrap(nil, codectest.Unhex(t, "c7000000"))} }},
	{name: "master_single", source: vectorSource + vecList, build: vectorDatagram(vecList, "response")},
	{name: "master_multi", source: "built by AppendMasterList: 170 IPs with 4 ports each, received in the order 2, 0, 1",
		build: func(t testing.TB) [][]byte {
			ds := AppendMasterList(nil, multiServers(170, 4))
			if len(ds) != 3 {
				t.Fatalf("%d packets, want 3", len(ds))
			}
			return permute(ds, 2, 0, 1)
		}},
	{name: "master_legacy", source: "built by AppendLegacyMasterList: three servers",
		build: func(t testing.TB) [][]byte {
			return [][]byte{AppendLegacyMasterList(nil, []Addr{{[4]byte{1, 2, 3, 4}, 10666}, {[4]byte{1, 2, 3, 4}, 10667}, {[4]byte{203, 0, 113, 9}, 5029}})}
		}},
	{name: "master_denied", source: "built by AppendMasterDenied: MSC_REQUESTIGNORED",
		build: func(t testing.TB) [][]byte { return [][]byte{AppendMasterDenied(nil, MasterIgnored)} }},
}

func (c *goldenCase) datagrams(t testing.TB) [][]byte {
	t.Helper()
	ds := c.build(t)
	path := "testdata/" + c.name + ".hex"
	var want bytes.Buffer
	want.WriteString("# " + c.source + "\n# one datagram a line, as received (Huffman layer included)\n")
	for _, d := range ds {
		want.WriteString(hex.EncodeToString(d) + "\n")
	}
	codectest.Golden(t, path, want.Bytes())
	return ds
}

func (c *goldenCase) options(t testing.TB, spans bool) codecs.DecodeOptions {
	opt := codecs.DecodeOptions{Spans: spans}
	if c.query != nil {
		opt.Query = c.query(t)
	}
	return opt
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			ds := c.datagrams(t)
			m, err := (&Codec{}).Decode(ds, c.options(t, true))
			noErr(t, "Decode", err)
			plain, err := (&Codec{}).Decode(ds, c.options(t, false))
			noErr(t, "Decode without spans", err)
			// The spans change nothing else.
			plainJSON := string(plain.AppendJSON(nil))
			m2 := *m
			m2.Layers, m2.Spans = nil, nil
			equal(t, "message with and without spans", plainJSON, string(m2.AppendJSON(nil)))

			var got bytes.Buffer
			got.WriteString("# " + c.source + "\n")
			got.Write(codecs.AppendDump(nil, m))
			got.WriteString("json " + plainJSON + "\n")
			codectest.Golden(t, "testdata/"+c.name+".golden", got.Bytes())
			codectest.SpansCover(t, m)
		})
	}
}

// checkSpans checks that every span lies in its layer and that every
// payload byte is covered by some span.
// TestTruncated cuts every datagram of every golden message at every
// length: decoding must fail with a *codecs.Error whose offset lies within
// the layer it names, and never panic. Requests are the exception: a
// request without its optional trailing byte is still a request, so only
// prefixes shorter than the fixed fields must fail.
func TestTruncated(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			ds := c.datagrams(t)
			for j, d := range ds {
				cut := append([][]byte(nil), ds...)
				for _, spans := range []bool{false, true} {
					codectest.Prefixes(t, d, func(p []byte) error {
						// Decoding with spans is slow on the big master
						// packets; a sample of the prefixes shows it fails
						// alike.
						if spans && len(d) > 400 && len(p)%16 != 0 && len(p) < len(d)-32 {
							return nil
						}
						cut[j] = p
						m, err := (&Codec{}).Decode(cut, c.options(t, spans))
						if c.request > 0 {
							if q, _ := Unwrap(nil, p); len(q) >= c.request {
								return nil // the fixed fields are all there: it may decode
							}
						}
						if err == nil {
							t.Fatalf("datagram %d cut to %d bytes decoded without error: %s", j, len(p), m.AppendJSON(nil))
						}
						return err
					}, func(p []byte, e *codecs.Error) int {
						return layerLen(t, cut, e.Layer)
					})
				}
			}
		})
	}
}

func layerLen(t testing.TB, datagrams [][]byte, name string) int {
	switch name {
	case "":
		return 0
	case "reassembled":
		m, _ := (&Codec{}).Decode(datagrams, codecs.DecodeOptions{Spans: true})
		for _, l := range m.Layers {
			if l.Name == name {
				return len(l.Bytes)
			}
		}
		return -1
	}
	for k, d := range datagrams {
		wn, pn := layerNames(k, len(datagrams))
		switch name {
		case wn:
			return len(d)
		case pn:
			p, _ := Unwrap(nil, d)
			return len(p)
		}
	}
	return -1
}

// TestTruncatedPayload cuts the plain payload of every single-datagram
// golden reply: the Payload decoders fail at an offset within the cut.
func TestTruncatedPayload(t *testing.T) {
	for _, c := range goldenCases {
		ds := c.datagrams(t)
		if len(ds) != 1 || c.request > 0 || strings.HasPrefix(c.name, "master_request") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			p, err := Unwrap(nil, ds[0])
			noErr(t, "Unwrap", err)
			codectest.Prefixes(t, p, func(cut []byte) error {
				var err error
				if strings.HasPrefix(c.name, "master") {
					_, err = DecodeMasterListPayloads([][]byte{cut})
				} else {
					_, err = DecodeResponsePayload(cut, nil)
				}
				if err == nil {
					t.Fatalf("cut to %d decodes", len(cut))
				}
				return err
			}, nil)
		})
	}
}
