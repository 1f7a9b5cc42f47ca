package demo

// NewZandronum returns the handler of Zandronum server number i of a demo
// seeded with seed, with behavior b, for callers that run it on their own
// socket (tests that count the queries a server receives).
func NewZandronum(seed int64, i int, b Behavior) Handler {
	h, _ := newZandronumServer(seed, i, b)
	return h
}
