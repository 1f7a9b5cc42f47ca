package minecraft

import (
	"strconv"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

func newError(field string, off int, err error) *codecs.Error {
	return codecs.NewError(Protocol, field, off, err)
}

// readVarInt reads a VarInt for field.
func readVarInt(r *wire.Reader, field string) int32 {
	if r.Failed() {
		return 0
	}
	start := r.Offset()
	v, n := varInt(r.Rest())
	switch {
	case n == 0:
		r.Fail(field, codecs.ErrShort)
		return 0
	case n < 0:
		r.Fail(field, codecs.Detail(codecs.ErrTooLong, "a VarInt is at most 5 bytes"))
		return 0
	}
	r.Skip(field, n)
	if r.Recording() {
		r.Mark(field, "varint", start, strconv.Itoa(int(v)))
	}
	return v
}

// readString reads a VarInt byte count and that many bytes of UTF-8, at
// most max bytes.
func readString(r *wire.Reader, field string, max int) []byte {
	start := r.Offset()
	n := readVarInt(r, field+".length")
	if r.Failed() {
		return nil
	}
	if n < 0 || int(n) > max {
		r.FailAt(field+".length", start, codecs.Detail(codecs.ErrTooLong, "longer than this string may be"))
		return nil
	}
	vstart := r.Offset()
	b := r.Skip(field, int(n))
	if r.Recording() && b != nil {
		r.Mark(field, "utf8", vstart, string(b[:min(len(b), 200)]))
	}
	return b
}

// validHost says whether h may be a handshake's host: a DNS name or an IP
// address (letters, digits, dots, hyphens; colons for IPv6), at most
// MaxHostLen bytes. No other byte (CR, LF, NUL: another protocol's
// separators, or Forge's "\0FML\0" marker) may pass.
func validHost(h string) bool {
	if len(h) > MaxHostLen {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i] | 0x20
		if !(c >= 'a' && c <= 'z' || h[i] >= '0' && h[i] <= '9' || h[i] == '.' || h[i] == '-' || h[i] == ':') {
			return false
		}
	}
	return true
}

// DecodeRequest decodes a List Ping query: the handshake with next state 1
// followed by the status request (one write), or the legacy ping (FE, FE
// 01, or FE 01 FA "MC|PingHost" with its host and port).
func DecodeRequest(b []byte) (Request, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	q := readRequest(r)
	return q, r.Err()
}

func readRequest(r *wire.Reader) Request {
	var q Request
	if isLegacyPing(r.Rest()) {
		readLegacyRequest(r, &q)
	} else {
		n := readVarInt(r, "handshake.length")
		if !r.Failed() && (n < 1 || int(n) > r.Len()) {
			r.Fail("handshake.length", codecs.Detail(codecs.ErrBadValue, "not the handshake's length"))
		}
		p := r.Sub("handshake", int(n))
		if id := readVarInt(p, "handshake.id"); id != idHandshake && !p.Failed() {
			p.Fail("handshake.id", codecs.Detail(codecs.ErrNotQuery, "the handshake is packet 0"))
		}
		q.ProtocolVersion = readVarInt(p, "handshake.protocol")
		hs := p.Offset()
		host := readString(p, "handshake.host", MaxHostLen)
		if !p.Failed() && !validHost(string(host)) {
			p.FailAt("handshake.host", hs, codecs.Detail(codecs.ErrBadValue, "a host is letters, digits, dots, hyphens (colons for IPv6)"))
		}
		q.Host = string(host)
		q.Port = p.U16BE("handshake.port")
		if st := readVarInt(p, "handshake.next_state"); st != stateStatus && !p.Failed() {
			p.Fail("handshake.next_state", codecs.Detail(codecs.ErrNotQuery, "a status ping's next state is 1"))
		}
		if !p.Failed() && !p.Empty() {
			p.Fail("handshake", codecs.ErrTrailing)
		}
		r.Adopt(p)
		if l := readVarInt(r, "request.length"); l != 1 && !r.Failed() {
			r.Fail("request.length", codecs.Detail(codecs.ErrBadValue, "the status request is 1 byte"))
		}
		if id := r.U8("request.id"); id != idStatusReq && !r.Failed() {
			r.Fail("request.id", codecs.Detail(codecs.ErrNotQuery, "the status request is packet 0"))
		}
	}
	if !r.Failed() && !r.Empty() {
		r.Fail("trailing", codecs.ErrTrailing)
	}
	return q
}

// readLegacyRequest reads FE [01 [FA len "MC|PingHost" len proto hostlen
// host port]].
func readLegacyRequest(r *wire.Reader, q *Request) {
	q.Legacy = true
	q.ProtocolVersion = -1
	r.U8("legacy.ping")
	if r.Empty() {
		return
	}
	if r.U8("legacy.payload") != legacyPayload && !r.Failed() {
		r.Fail("legacy.payload", codecs.Detail(codecs.ErrNotQuery, "the legacy ping is FE 01"))
	}
	if r.Empty() {
		return
	}
	if r.U8("legacy.plugin") != legacyPlugin && !r.Failed() {
		r.Fail("legacy.plugin", codecs.Detail(codecs.ErrNotQuery, "a plugin message is FA"))
	}
	if ch := readUTF16(r, "legacy.channel", int(r.U16BE("legacy.channel.length"))); ch != legacyChannel && !r.Failed() {
		r.Fail("legacy.channel", codecs.Detail(codecs.ErrNotQuery, "the channel is MC|PingHost"))
	}
	rest := int(r.U16BE("legacy.data_length"))
	start := r.Offset()
	q.ProtocolVersion = int32(r.U8("legacy.protocol"))
	n := int(r.U16BE("legacy.host.length"))
	hs := r.Offset()
	if n > MaxHostLen && !r.Failed() {
		r.Fail("legacy.host.length", codecs.ErrTooLong)
	}
	q.Host = readUTF16(r, "legacy.host", n)
	if !r.Failed() && !validHost(q.Host) {
		r.FailAt("legacy.host", hs, codecs.Detail(codecs.ErrBadValue, "a host is letters, digits, dots, hyphens (colons for IPv6)"))
	}
	port := r.U32BE("legacy.port")
	if !r.Failed() && port > 0xffff {
		r.Fail("legacy.port", codecs.Detail(codecs.ErrBadValue, "a port is at most 65535"))
	}
	q.Port = uint16(port)
	if !r.Failed() && r.Offset()-start != rest {
		r.FailAt("legacy.data_length", start-2, codecs.Detail(codecs.ErrBadValue, "does not match the data"))
	}
}

// readUTF16 reads n UTF-16BE code units as text.
func readUTF16(r *wire.Reader, field string, n int) string {
	start := r.Offset()
	b := r.Skip(field, 2*n)
	if b == nil {
		return ""
	}
	s := fromUTF16BE(b)
	if r.Recording() {
		r.Mark(field, "utf16be", start, s)
	}
	return s
}

// DecodeResponse decodes one reply packet: a status response (its
// JSON read into Status) or a legacy reply. req is ignored (the reply
// says which it is).
func DecodeResponse(b []byte, req *Request) (Response, error) {
	var resp Response
	r := wire.NewReader(Protocol, b, 0, nil)
	readResponse(r, &resp, nil)
	return resp, r.Err()
}

// readResponse reads one reply packet; with spans it also reads the JSON
// text's formatting into spans of layer jsonLayer (the caller adds it).
func readResponse(r *wire.Reader, resp *Response, spans *[]codecs.Span) {
	if legacy, _ := isLegacyReply(r.Rest()); legacy {
		readLegacyResponse(r, resp)
		return
	}
	start := r.Offset()
	n := readVarInt(r, "length")
	switch {
	case r.Failed():
		return
	case n < 1:
		r.FailAt("length", start, codecs.Detail(codecs.ErrBadValue, "a packet is at least 1 byte"))
		return
	case int(n) > MaxReplyBytes:
		r.FailAt("length", start, codecs.Detail(codecs.ErrTooLong, strconv.Itoa(int(n))+" bytes; a reply is at most "+strconv.Itoa(MaxReplyBytes)))
		return
	case int(n) > r.Len():
		r.FailAt("length", start, codecs.Detail(codecs.ErrShort, "the packet says "+strconv.Itoa(int(n))+" bytes; "+strconv.Itoa(r.Len())+" came"))
		return
	}
	p := r.Sub("packet", int(n))
	if id := readVarInt(p, "id"); id != idStatusResp && !p.Failed() {
		p.Fail("id", codecs.Detail(codecs.ErrUnknownCode, "the status response is packet 0"))
	}
	js := p.Offset()
	resp.JSON = readString(p, "json", MaxReplyBytes)
	if !p.Failed() {
		doc, jerr := parseJSON(resp.JSON)
		if jerr != nil {
			p.FailAt("json", js, codecs.Detail(codecs.ErrBadValue, jerr.Error()+" at byte "+strconv.Itoa(jerr.off)+" of the JSON"))
		} else {
			readStatus(&doc, &resp.Status, spans)
		}
	}
	// Whatever follows the JSON in the packet (Better Compatibility
	// Checker's second document) is left alone.
	r.Adopt(p)
}

// readLegacyResponse reads FF, a count of UTF-16 units and the text:
// "§1\0proto\0version\0motd\0online\0max" (1.4 to 1.6) or
// "motd§online§max" (beta 1.8 to 1.3).
func readLegacyResponse(r *wire.Reader, resp *Response) {
	resp.Legacy = true
	r.U8("kick")
	n := int(r.U16BE("kick.length"))
	text := readUTF16(r, "kick.text", n)
	if r.Failed() {
		return
	}
	st := &resp.Status
	var parts []string
	if len(text) > 4 && text[:4] == "§1\x00" {
		parts = split(text[4:], "\x00")
		if len(parts) != 5 {
			r.Fail("kick.text", codecs.Detail(codecs.ErrBadValue, "a 1.4+ legacy reply has 6 fields"))
			return
		}
		st.VersionProtocol, _ = codecs.Atoi(parts[0])
		st.VersionName, st.HasVersion = parts[1], true
		parts = parts[2:]
	} else {
		parts = split(text, "§")
		if len(parts) < 3 {
			r.Fail("kick.text", codecs.Detail(codecs.ErrBadValue, "a legacy reply is motd§online§max"))
			return
		}
		parts = append([]string{join(parts[:len(parts)-2], "§")}, parts[len(parts)-2:]...)
	}
	var c chat
	c.add(-1, parts[0], "", 0, "")
	st.Description, st.Runs = string(c.text), c.runs
	on, ok1 := codecs.Atoi(parts[1])
	max, ok2 := codecs.Atoi(parts[2])
	if !ok1 || !ok2 {
		r.Fail("kick.text", codecs.Detail(codecs.ErrBadValue, "player counts are not numbers"))
		return
	}
	st.Online, st.Max, st.HasPlayers = on, max, true
}

// split cuts s at every sep.
func split(s, sep string) []string {
	var out []string
	start := 0
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			out = append(out, s[start:i])
			start = i + len(sep)
		}
	}
	return append(out, s[start:])
}

func join(parts []string, sep string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += sep
		}
		s += p
	}
	return s
}

// readStatus reads the status JSON's known members into st.
func readStatus(d *jdoc, st *Status, spans *[]codecs.Span) {
	c := chat{d: d, spans: spans, layer: 1}
	if desc := d.get(0, "description"); desc >= 0 {
		c.walk(desc, "", 0, "description")
		st.Description, st.Runs = string(c.text), c.runs
	}
	if v := d.get(0, "version"); v >= 0 {
		st.VersionName, st.HasVersion = d.str(d.get(v, "name"))
		st.VersionProtocol, _ = d.integer(d.get(v, "protocol"))
	}
	if p := d.get(0, "players"); p >= 0 {
		var ok1, ok2 bool
		st.Online, ok1 = d.integer(d.get(p, "online"))
		st.Max, ok2 = d.integer(d.get(p, "max"))
		st.HasPlayers = ok1 || ok2
		if s := d.get(p, "sample"); s >= 0 && d.n[s].kind == jArray {
			for e := d.n[s].first; e >= 0; e = d.n[e].next {
				name, _ := d.str(d.get(e, "name"))
				id, _ := d.str(d.get(e, "id"))
				st.Sample = append(st.Sample, SamplePlayer{Name: name, ID: id})
			}
		}
	}
	if f, ok := d.str(d.get(0, "favicon")); ok {
		st.Favicon = checkFavicon(f)
	}
	st.EnforcesSecureChat, st.HasSecureChat = d.boolean(d.get(0, "enforcesSecureChat"))
	// Forge 1.13 and newer (and NeoForge): forgeData.mods [{modId,
	// modmarker}]; FML of 1.7 to 1.12: modinfo {type, modList [{modid,
	// version}]}.
	if fd := d.get(0, "forgeData"); fd >= 0 {
		st.ModLoader = "forge"
		st.Mods = readMods(d, d.get(fd, "mods"), "modId", "modmarker")
		for _, m := range st.Mods {
			if m.ID == "neoforge" {
				st.ModLoader = "neoforge"
			}
		}
	} else if mi := d.get(0, "modinfo"); mi >= 0 {
		st.ModLoader, _ = d.str(d.get(mi, "type"))
		if st.ModLoader == "" {
			st.ModLoader = "fml"
		}
		st.Mods = readMods(d, d.get(mi, "modList"), "modid", "version")
	}
	if spans != nil {
		for _, k := range [...]string{"version", "players", "favicon", "enforcesSecureChat", "forgeData", "modinfo"} {
			if i := d.get(0, k); i >= 0 {
				v := ""
				if k == "favicon" && st.Favicon != nil {
					v = faviconValue(st.Favicon)
				}
				*spans = append(*spans, codecs.Span{Layer: 1, Start: int(d.n[i].start), End: int(d.n[i].end), Field: k, Kind: "json", Value: v})
			}
		}
	}
}

// readMods reads an array of mods, each an object with the id and
// version in members id and version.
func readMods(d *jdoc, arr int32, id, version string) []Mod {
	if arr < 0 || d.n[arr].kind != jArray {
		return nil
	}
	var mods []Mod
	for e := d.n[arr].first; e >= 0; e = d.n[e].next {
		i, _ := d.str(d.get(e, id))
		v, _ := d.str(d.get(e, version))
		mods = append(mods, Mod{ID: i, Version: v})
	}
	return mods
}

func faviconValue(f *Favicon) string {
	v := strconv.Itoa(f.Width) + "×" + strconv.Itoa(f.Height) + " PNG"
	if !f.OK {
		v = f.Problem
	}
	return v
}

// fromUTF16BE decodes UTF-16BE text, a lone surrogate as U+FFFD.
func fromUTF16BE(b []byte) string {
	out := make([]byte, 0, len(b))
	for i := 0; i+1 < len(b); i += 2 {
		r := rune(b[i])<<8 | rune(b[i+1])
		if r >= 0xd800 && r < 0xdc00 && i+3 < len(b) {
			if lo := rune(b[i+2])<<8 | rune(b[i+3]); lo >= 0xdc00 && lo < 0xe000 {
				r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
				i += 2
			}
		}
		out = utf8.AppendRune(out, r) // a lone surrogate becomes U+FFFD
	}
	return string(out)
}
