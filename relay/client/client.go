// Package client speaks the relay's protocol (docs/relay-protocol.md) over
// a WebSocket: Dial connects to a relay and reads its HELLO, and the
// Client it returns is a netquery.Exchanger for the command line and for
// tests. Refusals come back as *wire.RefusedError.
package client

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/internal/drive"
	"github.com/querylens/querylens/relay/wire"
)

// defaultWriteTimeout bounds writing one frame when DialOptions leaves it
// zero (the relay's own DefaultWriteTimeout).
const defaultWriteTimeout = 10 * time.Second

// DialOptions tunes Dial. The zero value is usable.
type DialOptions struct {
	// HTTPClient makes the handshake request (default http.DefaultClient).
	HTTPClient *http.Client
	// HTTPHeader is added to the handshake, e.g. an Origin header.
	HTTPHeader http.Header
	// WriteTimeout bounds writing one frame (default 10 s).
	WriteTimeout time.Duration
}

// Client is one WebSocket connection to a relay. It implements
// netquery.Exchanger; Exchange, Ping and Close may be called concurrently.
type Client struct {
	ws           *websocket.Conn
	hello        wire.Hello
	writeTimeout time.Duration
	slots        chan struct{} // one per open query id, up to Hello.MaxInFlight
	streams      chan struct{} // one per stream exchange in progress, up to wire.DefaultStreamsPerClient
	done         chan struct{} // closed when the connection ends

	mu     sync.Mutex
	err    error // why the connection ended, set before done closes
	routes map[uint32]*drive.Events
	pings  map[uint32]chan error
	lastID uint32 // ids and ping nonces share one space, so ERROR frames route unambiguously
}

var _ netquery.Exchanger = (*Client)(nil)

// Dial connects to the relay at url ("ws://host/path" or "wss://...") and
// reads its HELLO. A relay that refuses the connection (origin, connection
// caps, shutdown) is reported as a *wire.RefusedError.
func Dial(ctx context.Context, url string, opts *DialOptions) (*Client, error) {
	var o DialOptions
	if opts != nil {
		o = *opts
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = defaultWriteTimeout
	}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient:      o.HTTPClient,
		HTTPHeader:      o.HTTPHeader,
		Subprotocols:    []string{wire.SubprotocolStream, wire.Subprotocol},
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		if resp != nil {
			switch resp.StatusCode {
			case http.StatusForbidden:
				return nil, &wire.RefusedError{Code: wire.CodeDenied, Message: string(wire.RuleOrigin) + ": the relay refused this page's origin"}
			case http.StatusServiceUnavailable:
				return nil, &wire.RefusedError{Code: wire.CodeBusy, Message: string(wire.RuleShuttingDown) + ": the relay is shutting down"}
			}
		}
		return nil, err
	}
	version := wire.Version
	switch ws.Subprotocol() {
	case wire.Subprotocol:
	case wire.SubprotocolStream:
		version = wire.VersionStream
	default:
		ws.CloseNow()
		return nil, errors.New("relay: the server did not accept subprotocol " + wire.Subprotocol)
	}
	ws.SetReadLimit(1<<16 + 64)
	_, b, err := ws.Read(ctx)
	if err != nil {
		ws.CloseNow()
		return nil, closeError(err)
	}
	f, err := wire.ParseFrame(b)
	if err != nil || f.Type != wire.FrameHello || int(f.Hello.Version) != version {
		ws.Close(websocket.StatusProtocolError, "expected HELLO version "+strconv.Itoa(version))
		return nil, errors.New("relay: expected HELLO version " + strconv.Itoa(version))
	}
	c := &Client{
		ws:           ws,
		hello:        f.Hello,
		writeTimeout: o.WriteTimeout,
		slots:        make(chan struct{}, max(1, int(f.Hello.MaxInFlight))),
		streams:      make(chan struct{}, wire.DefaultStreamsPerClient),
		done:         make(chan struct{}),
		routes:       make(map[uint32]*drive.Events),
		pings:        make(map[uint32]chan error),
	}
	go c.readLoop()
	return c, nil
}

// closeError turns a close by the relay into a *wire.RefusedError when the
// reason names a rule (connection caps, subprotocol, shutdown, idle).
func closeError(err error) error {
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Code {
	case websocket.StatusTryAgainLater, websocket.StatusGoingAway:
		return &wire.RefusedError{Code: wire.CodeBusy, Message: ce.Reason}
	case websocket.StatusPolicyViolation:
		return &wire.RefusedError{Code: wire.CodeDenied, Message: ce.Reason}
	}
	return err
}

// Hello returns the limits the relay announced.
func (c *Client) Hello() wire.Hello { return c.hello }

func (c *Client) readLoop() {
	for {
		_, b, err := c.ws.Read(context.Background())
		if err != nil {
			c.mu.Lock()
			c.err = closeError(err)
			c.mu.Unlock()
			close(c.done)
			return
		}
		if len(b) > 0 && wire.FrameType(b[0]) == wire.FrameBatch {
			// querylens.relay.v2 includes v1.batch's BATCH from the relay.
			frames, err := wire.SplitBatch(b)
			if err != nil {
				continue
			}
			for _, fr := range frames {
				c.handleFrame(fr)
			}
			continue
		}
		c.handleFrame(b)
	}
}

// handleFrame routes one frame from the relay.
func (c *Client) handleFrame(b []byte) {
	f, err := wire.ParseFrame(b)
	if err != nil {
		return
	}
	switch f.Type {
	case wire.FrameChunk:
		c.route(f.ID, drive.Event{Type: wire.FrameChunk, ID: f.ID, Data: f.Datagram, Flags: f.Flags}, false)
	case wire.FrameReply:
		c.route(f.ID, drive.Event{Type: wire.FrameReply, ID: f.ID, Data: f.Datagram, RTT: f.RTT, Flags: f.Flags}, false)
	case wire.FrameEnd:
		c.route(f.ID, drive.Event{Type: wire.FrameEnd, ID: f.ID, Reason: f.Reason}, true)
	case wire.FrameError:
		if c.pong(f.ID, &wire.RefusedError{ID: f.ID, Code: f.Code, Message: f.Message}) {
			return // a refused PING
		}
		c.route(f.ID, drive.Event{Type: wire.FrameError, ID: f.ID, Code: f.Code, Msg: f.Message}, true)
	case wire.FramePong:
		c.pong(f.ID, nil)
	}
}

func (c *Client) route(id uint32, ev drive.Event, final bool) {
	c.mu.Lock()
	q := c.routes[id]
	if final && q != nil {
		delete(c.routes, id)
		<-c.slots
	}
	c.mu.Unlock()
	if q != nil {
		q.Push(ev)
	}
}

// pong answers the Ping waiting for nonce, if any.
func (c *Client) pong(nonce uint32, err error) bool {
	c.mu.Lock()
	ch := c.pings[nonce]
	delete(c.pings, nonce)
	c.mu.Unlock()
	if ch != nil {
		ch <- err
	}
	return ch != nil
}

// nextIDLocked returns an id that is neither 0 nor in use.
func (c *Client) nextIDLocked() uint32 {
	for {
		c.lastID++
		id := c.lastID
		if id == 0 || c.routes[id] != nil || c.pings[id] != nil {
			continue
		}
		return id
	}
}

func (c *Client) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return errors.New("relay: connection closed")
	}
	return c.err
}

// writeFrame writes one frame. It does not use the caller's context: the
// WebSocket library closes the connection when a write's context ends.
func (c *Client) writeFrame(fr []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.writeTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageBinary, fr)
}

// Exchange drives q through the relay: it satisfies netquery.Exchanger.
// Refusals by the relay come back as *wire.RefusedError; a window that closes
// before q is done is a nil error with Result.Done false.
func (c *Client) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	if len(protocol) > 255 || len(target) > 255 {
		return netquery.Result{}, &wire.RefusedError{Code: wire.CodeBadFrame, Message: "bad-frame: protocol or target longer than 255 bytes"}
	}
	return drive.Run(ctx, q, &remote{c: c, protocol: protocol, target: target, ev: drive.NewEvents()})
}

var _ netquery.OptionsExchanger = (*Client)(nil)

// ExchangeOptions asks the relay to hold one conversation of a stream
// (TCP) protocol (an EXCHANGE, on wire.SubprotocolStream): the relay
// builds the query from opts, and the reply's bytes feed q through a
// codecs.Stream (what q asks to write is the relay's to write). Done says
// the relay ended the exchange with END done; Capped, with the cap.
// Received counts the messages fed to q. Refusals are *wire.RefusedError.
func (c *Client) ExchangeOptions(ctx context.Context, protocol, target string, opts map[string]string, q codecs.Query) (netquery.Result, error) {
	var res netquery.Result
	if c.ws.Subprotocol() != wire.SubprotocolStream {
		return res, &wire.RefusedError{Code: wire.CodeNotAQuery, Message: string(wire.RuleNotStream) + ": this relay does not hold TCP exchanges (no " + wire.SubprotocolStream + ")"}
	}
	frame, err := wire.AppendFrame(nil, wire.Frame{Type: wire.FrameExchange, Protocol: protocol, Target: target, Options: opts})
	if err != nil {
		return res, &wire.RefusedError{Code: wire.CodeBadFrame, Message: string(wire.RuleBadFrame) + ": " + err.Error()}
	}
	d, err := codecs.LookupDescription(protocol)
	if err != nil {
		return res, err
	}
	// Within the relay's cap of connections in progress per client, so
	// that many exchanges asked at once wait here instead of being
	// refused (wire.RuleTCPPerClient).
	select {
	case c.streams <- struct{}{}:
	case <-ctx.Done():
		return res, ctx.Err()
	case <-c.done:
		return res, c.closedErr()
	}
	defer func() { <-c.streams }()
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return res, ctx.Err()
	case <-c.done:
		return res, c.closedErr()
	}
	r := &remote{c: c, protocol: protocol, target: target, ev: drive.NewEvents()}
	c.mu.Lock()
	id := c.nextIDLocked()
	c.routes[id] = r.ev
	c.mu.Unlock()
	binary.BigEndian.PutUint32(frame[1:], id)
	if err := c.writeFrame(frame); err != nil {
		c.forget(id)
		return res, err
	}
	return drive.RunStream(ctx, q, d, id, r.Next, r.Cancel)
}

// remote is one Exchange's transport over the client's connection.
type remote struct {
	c                *Client
	protocol, target string
	ev               *drive.Events
}

func (r *remote) Send(ctx context.Context, d []byte) (uint32, error) {
	c := r.c
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-c.done:
		return 0, c.closedErr()
	}
	c.mu.Lock()
	id := c.nextIDLocked()
	c.routes[id] = r.ev
	c.mu.Unlock()
	if err := c.writeFrame(wire.AppendQuery(nil, id, r.protocol, r.target, d)); err != nil {
		c.forget(id)
		return 0, err
	}
	return id, nil
}

// forget drops id's route and frees its slot; it reports whether id was open.
func (c *Client) forget(id uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.routes[id] == nil {
		return false
	}
	delete(c.routes, id)
	<-c.slots
	return true
}

// cancel ends id early. Its slot is freed only once CANCEL is written:
// freed before, another query could take it and reach the relay ahead of
// the CANCEL, while the relay still counts id against Hello.MaxInFlight,
// and be refused busy.
func (r *remote) Cancel(id uint32) {
	c := r.c
	c.mu.Lock()
	open := c.routes[id] != nil
	delete(c.routes, id)
	c.mu.Unlock()
	if !open {
		return
	}
	c.writeFrame(wire.AppendIDFrame(nil, wire.FrameCancel, id))
	<-c.slots
}

func (r *remote) Next(ctx context.Context) (drive.Event, error) {
	ev, ok := r.ev.Next(ctx, r.c.done)
	if ok {
		return ev, nil
	}
	if ctx.Err() != nil {
		return ev, ctx.Err()
	}
	return ev, r.c.closedErr()
}

// Ping measures the time to the relay and back.
func (c *Client) Ping(ctx context.Context) (time.Duration, error) {
	ch := make(chan error, 1)
	c.mu.Lock()
	nonce := c.nextIDLocked()
	c.pings[nonce] = ch
	c.mu.Unlock()
	start := time.Now()
	err := c.writeFrame(wire.AppendIDFrame(nil, wire.FramePing, nonce))
	if err == nil {
		select {
		case err := <-ch:
			if err != nil {
				return 0, err
			}
			return time.Since(start), nil
		case <-ctx.Done():
			err = ctx.Err()
		case <-c.done:
			err = c.closedErr()
		}
	}
	c.mu.Lock()
	delete(c.pings, nonce)
	c.mu.Unlock()
	return 0, err
}

// Close closes the connection and waits for its reader to stop.
func (c *Client) Close() error {
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.done
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
