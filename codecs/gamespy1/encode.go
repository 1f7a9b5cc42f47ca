package gamespy1

import (
	"strconv"

	"github.com/querylens/querylens/codecs"
)

// AppendRequest appends the query datagram of q to dst: each word as
// `\word\`, its value (if any) after it, closed by '\' unless q.Open
// leaves the last one open. The words must be ones DecodeRequest accepts.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	start := len(dst)
	if len(q.Words) == 0 {
		return dst, newError("words", 0, "", codecs.Detail(codecs.ErrShort, "no word"))
	}
	if q.Open && q.Words[len(q.Words)-1].Value == "" {
		return dst, newError("words", 0, "", codecs.Detail(codecs.ErrBadValue, "only a value can be left open"))
	}
	for i, w := range q.Words {
		dst = append(dst, '\\')
		dst = append(dst, w.Name...)
		dst = append(dst, '\\')
		if w.Value != "" {
			dst = append(dst, w.Value...)
			if i < len(q.Words)-1 || !q.Open {
				dst = append(dst, '\\')
			}
		}
	}
	// The encoder and the decoder agree by construction: check the bytes.
	if _, err := DecodeRequest(dst[start:]); err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// AppendResponse appends the datagram of resp to dst, as a server sends
// it (the demo servers and the tests use it): the pairs, then \queryid\
// and \final\ in the order FinalFirst says, then the trailing '\' if
// Trailer. Keys must be non-empty; keys and values hold no '\', and no key
// is queryid or final (those are QueryID and Final). Text is written as
// Latin-1.
func AppendResponse(dst []byte, resp Response) ([]byte, error) {
	if len(resp.Vars) == 0 && resp.QueryID == "" && !resp.Final {
		return dst, newError("vars", 0, "", codecs.Detail(codecs.ErrShort, "an empty datagram"))
	}
	for i, v := range resp.Vars {
		field := "vars[" + strconv.Itoa(i) + "]"
		switch {
		case v.Key == "":
			return dst, newError(field+".key", 0, "", codecs.Detail(codecs.ErrBadValue, "an empty key"))
		case v.Key == KeyQueryID || v.Key == KeyFinal:
			return dst, newError(field+".key", 0, "", codecs.Detail(codecs.ErrBadValue, v.Key+" is set by QueryID and Final"))
		case hasSlash(v.Key) || hasSlash(v.Value):
			return dst, newError(field, 0, "", codecs.Detail(codecs.ErrBadValue, "a key or value holds no '\\'"))
		}
		dst = codecs.ToLatin1(append(dst, '\\'), v.Key)
		dst = codecs.ToLatin1(append(dst, '\\'), v.Value)
	}
	if resp.QueryID != "" && !validQueryID([]byte(resp.QueryID)) {
		return dst, newError("queryid", 0, "", codecs.Detail(codecs.ErrBadValue, strconv.Quote(resp.QueryID)+" is not ID.N"))
	}
	if resp.Final && (resp.FinalFirst || resp.QueryID == "") {
		dst = append(dst, "\\final\\"...)
	}
	if resp.QueryID != "" {
		dst = append(dst, "\\queryid\\"...)
		dst = append(dst, resp.QueryID...)
	}
	if resp.Final && !resp.FinalFirst && resp.QueryID != "" {
		dst = append(dst, "\\final\\"...)
	}
	if resp.Trailer {
		dst = append(dst, '\\')
	}
	return dst, nil
}

func hasSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			return true
		}
	}
	return false
}
