package minecraft

import (
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Warnings this package attaches to decoded messages.
const (
	// WarnFavicon: the favicon is not a PNG of at most 64×64; it is left
	// out (Fields' favicon says why).
	WarnFavicon = "favicon is not a PNG of at most 64×64"
)

// Codec is the codecs.Codec of Minecraft Java Edition's Server List Ping.
// Importing the package registers it (and BedrockCodec).
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "Minecraft Java" }
func (*Codec) DefaultPort() int { return DefaultPort }

var queryOptions = []codecs.Option{
	// host and port restate the target: whoever runs the conversation
	// passes them (codecs.Description.TargetInQuery); nobody needs to
	// give them by hand.
	{Name: "host", Kind: codecs.OptionText, Default: "",
		Help: "the server's name as typed, which the handshake carries (proxies route on it): letters, digits, dots, hyphens"},
	{Name: "port", Kind: codecs.OptionUint, Default: "",
		Help: "the server's port as typed, which the handshake carries; empty: 25565"},
	{Name: "protocol", Kind: codecs.OptionText, Default: "-1",
		Help: "the protocol number the handshake names (-1: none, the server answers with its own)"},
	{Name: "legacy", Kind: codecs.OptionBool, Default: "false",
		Help: "ask with the legacy ping of 1.6 and older (FE 01 FA MC|PingHost), which 1.4 to 1.6 servers answer"},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// isQuery says whether b is a List Ping query (the legacy ping, or a
// handshake that decodes).
func isQuery(b []byte) bool {
	if isLegacyPing(b) {
		return true
	}
	// The handshake's VarInt length (two bytes for a long host), then
	// its packet id.
	if _, k := varInt(b); k <= 0 || len(b) < 8 || b[k] != idHandshake {
		return false
	}
	_, err := DecodeRequest(b)
	return err == nil
}

// Detect: a query that decodes is Certain, the 1.4+ legacy reply too; a
// status response (a packet 0 whose string is the rest of it and starts
// with '{') is Likely.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if isLegacyPing(b) {
		if _, err := DecodeRequest(b); err == nil {
			return codecs.KindQuery, codecs.Certain
		}
		return "", codecs.NotMine
	}
	if len(b) >= 9 && b[0] == legacyKick && b[3] == 0 && b[4] == 0xa7 && b[5] == 0 && b[6] == '1' && b[7] == 0 && b[8] == 0 {
		return codecs.KindResponse, codecs.Certain
	}
	if isQuery(b) {
		return codecs.KindQuery, codecs.Certain
	}
	n, k := varInt(b)
	if k <= 0 || int(n) != len(b)-k || len(b) < k+3 || b[k] != idStatusResp {
		return "", codecs.NotMine
	}
	s, j := varInt(b[k+1:])
	if j <= 0 || int(s) != len(b)-k-1-j || b[k+1+j] != '{' {
		return "", codecs.NotMine
	}
	return codecs.KindResponse, codecs.Likely
}

// CheckQuery accepts a List Ping as AppendRequest builds it: a handshake
// with next state 1 and a valid host, then the status request; or the
// 1.6 legacy ping with its host and port (the older FE and FE 01, which
// name no host, decode but are not sent). What the relay writes.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b)
	if err == nil && len(b) < 3 {
		err = newError("legacy.plugin", len(b), codecs.Detail(codecs.ErrNotQuery, "the legacy ping querylens sends names the host (FE 01 FA)"))
	}
	return err
}

// Decode decodes a query or a reply. The messages are the stream's bytes
// in order (the packets MessageLen cut, or any chunks of the stream):
// they are read as one stream, whose first packet is the reply; packets
// after it are left with a warning.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	if len(datagrams) == 0 {
		return m, newError("datagrams", 0, codecs.Detail(codecs.ErrIncomplete, "no reply"))
	}
	b := datagrams[0]
	name := "wire"
	if len(datagrams) > 1 {
		total := 0
		for _, d := range datagrams {
			total += len(d)
		}
		if total > MaxReplyBytes+16 {
			return m, newError("stream", MaxReplyBytes, codecs.Detail(codecs.ErrTooLong, "more than a reply may be"))
		}
		b = make([]byte, 0, total)
		for _, d := range datagrams {
			b = append(b, d...)
		}
		name = "stream"
	}
	var spans *[]codecs.Span
	if opt.Spans {
		m.Layers = []codecs.Layer{{Name: name, Bytes: b, Parent: -1}}
		m.Spans = make([]codecs.Span, 0, 16)
		spans = &m.Spans
	}
	r := wire.NewReader(Protocol, b, 0, spans)
	if isQuery(b) {
		m.Kind = codecs.KindQuery
		q := readRequest(r)
		if !opt.NoFields {
			m.Fields.Put("legacy", q.Legacy)
			m.Fields.PutInt("protocol", int(q.ProtocolVersion))
			m.Fields.PutString("host", q.Host)
			m.Fields.PutInt("port", int(q.Port))
		}
		return m, r.Err()
	}
	var resp Response
	var jspans []codecs.Span
	var jp *[]codecs.Span
	if opt.Spans {
		jp = &jspans
	}
	readResponse(r, &resp, jp)
	if opt.Spans && resp.JSON != nil {
		m.Layers = append(m.Layers, codecs.Layer{Name: "json", Bytes: resp.JSON, Parent: 0})
		m.Spans = append(m.Spans, jspans...)
	}
	if err := r.Err(); err != nil {
		return m, err
	}
	if !r.Empty() {
		m.Warn(codecs.WarnTrailing)
		if opt.Spans {
			start := r.Offset()
			r.Skip("trailing", r.Len())
			r.Mark("trailing", "bytes", start, strconv.Itoa(r.Offset()-start)+" bytes")
		}
	}
	fill(m, &resp, opt)
	return m, nil
}

// fill maps a status onto the neutral view and the fields.
func fill(m *codecs.Message, resp *Response, opt codecs.DecodeOptions) {
	st := &resp.Status
	in := &codecs.Info{Has: codecs.HasName, Name: oneLine(st.Description)}
	if st.HasVersion {
		in.Has |= codecs.HasVersion
		in.Version = st.VersionName
	}
	if st.HasPlayers {
		in.Has |= codecs.HasNumPlayers | codecs.HasMaxPlayers
		in.NumPlayers, in.MaxPlayers = st.Online, st.Max
	}
	if st.Sample != nil {
		in.Has |= codecs.HasPlayers
		for _, p := range st.Sample {
			in.Players = append(in.Players, codecs.Player{Name: oneLine(stripCodes(p.Name))})
		}
	}
	if st.ModLoader != "" {
		in.Has |= codecs.HasGameType
		in.GameType = st.ModLoader
	}
	if len(st.Mods) > 0 {
		in.Has |= codecs.HasRules
		for _, md := range st.Mods {
			in.Rules = append(in.Rules, [2]string{"mod:" + md.ID, md.Version})
		}
	}
	m.Info = in
	if st.Favicon != nil && !st.Favicon.OK {
		m.Warn(WarnFavicon)
	}
	if opt.NoFields {
		return
	}
	var f codecs.Object
	f.Put("legacy", resp.Legacy)
	f.PutString("description", st.Description)
	runs := make([]codecs.Object, len(st.Runs))
	for i, r := range st.Runs {
		o := &runs[i]
		o.PutString("text", r.Text)
		if f := runFormat(r); f != "" {
			o.PutString("format", f) // "gold bold": the colour, then the styles
		}
	}
	f.Put("runs", runs)
	if st.HasVersion {
		var v codecs.Object
		v.PutString("name", st.VersionName)
		v.PutInt("protocol", st.VersionProtocol)
		f.Put("version", v)
	}
	if st.HasPlayers || st.Sample != nil {
		var p codecs.Object
		p.PutInt("online", st.Online)
		p.PutInt("max", st.Max)
		if st.Sample != nil {
			p.Put("sample", pairs(len(st.Sample), "name", "id", func(i int) (string, string) { return st.Sample[i].Name, st.Sample[i].ID }))
		}
		f.Put("players", p)
	}
	if fv := st.Favicon; fv != nil {
		var o codecs.Object
		o.Put("ok", fv.OK)
		o.PutInt("width", fv.Width)
		o.PutInt("height", fv.Height)
		if fv.OK {
			o.PutString("png_base64", fv.Data)
		} else {
			o.PutString("problem", fv.Problem)
		}
		f.Put("favicon", o)
	}
	if st.HasSecureChat {
		f.Put("enforcesSecureChat", st.EnforcesSecureChat)
	}
	if st.ModLoader != "" {
		f.PutString("modloader", st.ModLoader)
		f.Put("mods", pairs(len(st.Mods), "id", "version", func(i int) (string, string) { return st.Mods[i].ID, st.Mods[i].Version }))
	}
	m.Fields = f
}

// pairs is n objects of two text members, k1 and k2, from at.
func pairs(n int, k1, k2 string, at func(int) (string, string)) []codecs.Object {
	out := make([]codecs.Object, n)
	for i := range out {
		a, b := at(i)
		out[i].PutString(k1, a)
		out[i].PutString(k2, b)
	}
	return out
}

// NewQuery starts a List Ping of the server host:port (the options
// "host" and "port", which whoever runs the conversation fills from the
// target as the user gave it), or the legacy ping with "legacy".
func (c *Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(Protocol, queryOptions, opts)
	q := Request{Host: r.Value("host"), Legacy: r.Bool("legacy"), Port: DefaultPort, ProtocolVersion: PingProtocol}
	if r.Set("port") {
		q.Port = uint16(r.Uint("port", 16))
	}
	if v := r.Value("protocol"); v != "" {
		n, ok := codecs.Atoi(v)
		if !ok {
			r.Fail("protocol", "not a number")
		}
		q.ProtocolVersion = int32(n)
	}
	if !validHost(q.Host) {
		r.Fail("host", "a host is letters, digits, dots, hyphens (colons for IPv6), at most 253")
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	b, err := AppendRequest(nil, q)
	if err != nil {
		return nil, err
	}
	return &query{req: b}, nil
}

// query is one List Ping: one write, one reply packet.
type query struct {
	req []byte
	got [][]byte
}

func (q *query) Start() [][]byte { return [][]byte{q.req} }

// Feed takes one message as MessageLen cut it. The status response, the
// legacy reply or a frame that cannot be one (MessageLen cut it at its
// header) completes the conversation; another packet is ignored with an
// error.
func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if legacy, _ := isLegacyReply(b); legacy {
		q.got = append(q.got, b)
		return nil, true, nil
	}
	n, k := varInt(b)
	if k < 0 || k > 0 && (n <= 0 || int(n) > MaxReplyBytes-k) {
		// A frame MessageLen cut at its header: no reply can follow.
		q.got = append(q.got, b)
		_, err := (&Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{NoFields: true})
		return nil, true, err
	}
	if k == 0 || int(n) != len(b)-k {
		return nil, false, newError("length", 0, codecs.Detail(codecs.ErrBadValue, "not one whole packet"))
	}
	if id, j := varInt(b[k:]); j <= 0 || id != idStatusResp {
		return nil, false, newError("id", k, codecs.Detail(codecs.ErrUnknownCode, "not the status response"))
	}
	q.got = append(q.got, b)
	return nil, true, nil
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if len(q.got) == 0 {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}, newError("reply", 0, codecs.Detail(codecs.ErrIncomplete, "no reply came"))
	}
	return (&Codec{}).Decode(q.got, opt)
}

// QueryKey is the query itself (it has no echo field), or nil when b is
// not a query: the relay's cache key.
func (*Codec) QueryKey(b []byte) []byte {
	if _, err := DecodeRequest(b); err != nil {
		return nil
	}
	return b
}
