package wire

import (
	"strconv"
	"strings"
)

// Code is ERROR's code byte: the class of a refusal, which a client acts
// on (a rate limit is tried again later, a denied target never). The
// message's rule (Rule) says which check refused.
type Code uint8

const (
	CodeBadFrame        Code = 1 // the frame could not be parsed or breaks a framing rule
	CodeUnknownProtocol Code = 2 // no codec of that name
	CodeNotAQuery       Code = 3 // the codec's CheckQuery refused the datagram
	CodeDenied          Code = 4 // target address or port refused by policy
	CodeRateLimited     Code = 5 // a rate limit (connection, client IP, target) refused it
	CodeTimeout         Code = 6 // no reply within the window
	CodeResolve         Code = 7 // the name did not resolve, or resolved to a refused address
	CodeBusy            Code = 8 // too many queries in flight, or the relay is shutting down
	CodeInternal        Code = 9 // the relay failed (socket error)
)

var codeNames = [...]string{
	CodeBadFrame: "bad-frame", CodeUnknownProtocol: "unknown-protocol", CodeNotAQuery: "not-a-query",
	CodeDenied: "denied", CodeRateLimited: "rate-limited", CodeTimeout: "timeout", CodeResolve: "resolve",
	CodeBusy: "busy", CodeInternal: "internal",
}

// String is the code's name, as metrics and the page's model name it;
// an unknown code is "code-N".
func (c Code) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	return "code-" + strconv.Itoa(int(c))
}

// RefusedError is a refusal or failure reported by a relay, in the ERROR
// frame's terms. The relay client and the relay's in-process Exchange
// return it; callers that only judge it (the server model) need this
// package alone.
type RefusedError struct {
	ID      uint32
	Code    Code
	Message string // "rule: detail"
}

func (e *RefusedError) Error() string {
	return "relay: " + e.Code.String() + ": " + e.Message
}

// Rule names the rule that refused: the part of Message before ": ".
func (e *RefusedError) Rule() Rule {
	if i := strings.Index(e.Message, ": "); i >= 0 {
		return Rule(e.Message[:i])
	}
	return Rule(e.Message)
}
