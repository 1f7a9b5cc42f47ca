package deliver

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/alerts"
)

// Sender delivers messages over HTTP. It is safe for concurrent use.
type Sender struct {
	cfg    Config
	client *http.Client
	pace   pacer
}

// New makes a Sender.
func New(cfg Config) (*Sender, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Sender{cfg: cfg}
	s.pace.init()
	tr := &http.Transport{
		Proxy:                  nil, // never the environment's proxy: it would be the one to connect, unchecked
		DialContext:            s.dial,
		TLSClientConfig:        &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    cfg.AttemptTimeout,
		ResponseHeaderTimeout:  cfg.AttemptTimeout,
		MaxResponseHeaderBytes: MaxResponse,
		ForceAttemptHTTP2:      true,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
	}
	s.client = &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an answer, not a new destination
		},
	}
	return s, nil
}

// Close closes idle connections.
func (s *Sender) Close() { s.client.CloseIdleConnections() }

// dial resolves addr once, checks every address it resolves to, and
// dials the addresses checked: a name cannot resolve to a public address
// for the check and a private one for the connection.
func (s *Sender) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return nil, &Error{Reason: ErrAddress, Detail: "bad port"}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = s.cfg.Resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &Error{Reason: ErrAddress, Detail: host + " resolves to nothing"}
		}
	}
	for _, a := range addrs {
		if !s.allowed(a) {
			return nil, &Error{Reason: ErrAddress, Detail: host + " resolves to " + a.String() + ", which the address rule refuses"}
		}
	}
	var last error
	for _, a := range addrs {
		c, err := s.cfg.Dial(ctx, "tcp", netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// Errors of delivery (Error.Reason).
var (
	ErrURL      = errors.New("the URL is not one of its kind") // not https, not Discord's or Slack's host, no token...
	ErrAddress  = errors.New("the address is not allowed")     // the address rule refused what the host resolves to
	ErrStatus   = errors.New("the destination refused")        // a 4xx other than 429: retrying will not help
	ErrGaveUp   = errors.New("no success within the attempts") // 5xx, 429, timeouts and network errors until MaxAttempts or MaxWait
	ErrGone     = errors.New("the message is gone")            // a Discord edit answered 404
	ErrKind     = errors.New("the message is for another kind of destination")
	ErrNoBoard  = errors.New("only Discord keeps a live status message")
	ErrResponse = errors.New("the answer does not decode")

	// errTransient is an attempt's failure worth retrying; Send's
	// caller sees ErrGaveUp once the attempts are spent.
	errTransient = errors.New("temporary failure")
)

// Error is a failed delivery. It never carries a secret: Dest is masked
// (alerts.MaskURL), and the errors of net/http, which print the URL, are
// rewritten with the URL masked.
type Error struct {
	Dest     string // the destination, masked
	Reason   error  // one of the Err* values above
	Status   int    // the last HTTP status, if any
	Attempts int    // attempts made
	Detail   string // more about it, masked
	Err      error  // the last underlying error, masked
	// RetryAfter is the wait the destination asked for in its last
	// answer (Retry-After, Discord's retry_after), if it asked: an
	// outbox that tries again later starts from it.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := "deliver: "
	if e.Dest != "" {
		s += e.Dest + ": "
	}
	s += e.Reason.Error()
	if e.Status != 0 {
		s += " (status " + strconv.Itoa(e.Status) + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Attempts > 1 {
		s += " after " + strconv.Itoa(e.Attempts) + " attempts"
	}
	return s
}

// Unwrap gives Reason and Err to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Reason}
	}
	return []error{e.Reason, e.Err}
}

// Result is a delivery that succeeded.
type Result struct {
	Status    int
	Attempts  int
	MessageID string // Discord: the id of the message posted (wait=true)
}

// Send delivers m to d: checks d's URL and the address it resolves to,
// then posts m, retrying 429, 5xx and network failures with backoff
// (honouring Retry-After and Discord's retry_after) within MaxAttempts
// and MaxWait, paced per destination. Every attempt of a generic webhook
// carries m.ID as webhook-id and is signed anew with its own time.
func (s *Sender) Send(ctx context.Context, d alerts.Destination, m alerts.Message) (Result, error) {
	if m.Kind != d.Kind {
		return Result{}, &Error{Dest: d.String(), Reason: ErrKind}
	}
	if d.Kind == alerts.DestWebhook && m.ID == "" {
		return Result{}, &Error{Dest: d.String(), Reason: ErrKind, Detail: "a signed message needs its id (webhook-id)"}
	}
	u, err := s.Check(d)
	if err != nil {
		return Result{}, err
	}
	q := u.Query()
	if d.Kind == alerts.DestDiscord {
		q.Set("wait", "true")
	}
	u.RawQuery = q.Encode()
	return s.do(ctx, d, http.MethodPost, u, m.ID, m.Body)
}

// Check reports whether d's URL is one of its kind and returns it parsed
// (thread_id added for Discord): https (or, for a generic webhook or a
// test host, http with AllowHTTP); a
// Discord webhook at discord.com or discordapp.com under
// /api/webhooks/{id}/{token}; a Slack one at hooks.slack.com under
// /services/; a generic one anywhere, with a valid signing secret. Only
// the shape: the address is checked when connecting.
func (s *Sender) Check(d alerts.Destination) (*url.URL, error) {
	bad := func(detail string) (*url.URL, error) {
		return nil, &Error{Dest: d.String(), Reason: ErrURL, Detail: detail}
	}
	u, err := url.Parse(d.URL)
	if err != nil || u.Host == "" {
		return bad("not an absolute URL")
	}
	switch {
	case u.User != nil:
		return bad("user info in the URL")
	case u.Scheme == "http" && !s.cfg.AllowHTTP:
		return bad("http is not allowed: use https")
	case u.Scheme != "https" && u.Scheme != "http":
		return bad("the scheme is not https")
	}
	u.Fragment, u.RawFragment = "", ""
	test := false
	for _, h := range s.cfg.TestHosts {
		test = test || u.Host == h
	}
	segs := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	switch d.Kind {
	case alerts.DestDiscord:
		host := strings.ToLower(u.Hostname())
		if !test && (u.Scheme != "https" || u.Port() != "" || (host != "discord.com" && host != "discordapp.com" && host != "ptb.discord.com" && host != "canary.discord.com")) {
			return bad("a Discord webhook is at https://discord.com/api/webhooks/")
		}
		if len(segs) == 5 && segs[0] == "api" && strings.HasPrefix(segs[1], "v") && segs[2] == "webhooks" {
			segs = append(segs[:1], segs[2:]...)
		}
		if len(segs) != 4 || segs[0] != "api" || segs[1] != "webhooks" || !digits(segs[2]) || segs[3] == "" {
			return bad("a Discord webhook URL is https://discord.com/api/webhooks/{id}/{token}")
		}
		if u.RawQuery != "" {
			return bad("a Discord webhook URL has no query (the thread is thread_id)")
		}
		if d.ThreadID != "" {
			if !digits(d.ThreadID) {
				return bad("thread_id is not a Discord id")
			}
			u.RawQuery = url.Values{"thread_id": {d.ThreadID}}.Encode()
		}
	case alerts.DestSlack:
		host := strings.ToLower(u.Hostname())
		if !test && (u.Scheme != "https" || u.Port() != "" || host != "hooks.slack.com") {
			return bad("a Slack incoming webhook is at https://hooks.slack.com/services/")
		}
		if len(segs) < 2 || segs[0] != "services" || segs[len(segs)-1] == "" {
			return bad("a Slack incoming webhook URL is https://hooks.slack.com/services/...")
		}
	case alerts.DestWebhook:
		if _, err := alerts.ParseSecret(d.Secret); err != nil {
			return nil, &Error{Dest: d.String(), Reason: ErrURL, Err: err}
		}
	default:
		return bad("unknown kind " + strconv.Quote(string(d.Kind)))
	}
	return u, nil
}

func digits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// do makes the attempts of one request.
func (s *Sender) do(ctx context.Context, d alerts.Destination, method string, u *url.URL, id string, body []byte) (Result, error) {
	dest := d.String()
	key := paceKey(d)
	var waited time.Duration
	var last *Error
	for attempt := 1; ; attempt++ {
		if err := s.pace.wait(ctx, key, d.Kind, s.cfg.Now, s.cfg.Sleep); err != nil {
			return Result{}, &Error{Dest: dest, Reason: ErrGaveUp, Attempts: attempt - 1, Err: err}
		}
		res, hint, err := s.attempt(ctx, d, method, u, id, body)
		if err == nil {
			res.Attempts = attempt
			return res, nil
		}
		err.Dest, err.Attempts = dest, attempt
		if ctx.Err() != nil {
			return Result{}, &Error{Dest: dest, Reason: ErrGaveUp, Status: err.Status, Attempts: attempt, Err: ctx.Err()}
		}
		if !retryable(err) {
			return Result{}, err
		}
		last = err
		delay := s.backoff(attempt, hint)
		if attempt >= s.cfg.MaxAttempts || waited+delay > s.cfg.MaxWait {
			return Result{}, &Error{Dest: dest, Reason: ErrGaveUp, Status: last.Status, Attempts: attempt, Err: last.Err, RetryAfter: hint}
		}
		s.cfg.Logf("alerts: %s: attempt %d failed (%s); next in %s", dest, attempt, scrub(err.Error(), d), delay.Round(time.Millisecond))
		if err := s.cfg.Sleep(ctx, delay); err != nil {
			return Result{}, &Error{Dest: dest, Reason: ErrGaveUp, Status: last.Status, Attempts: attempt, Err: err}
		}
		waited += delay
	}
}

// retryable: 429, 5xx, timeouts and network errors; not a refused
// address, a bad URL, nor another 4xx.
func retryable(e *Error) bool {
	return e.Reason == errTransient
}

// backoff is the wait before the next attempt: the server's hint when it
// gave one, else exponential from BaseDelay, capped at MaxDelay, with
// jitter (a random half to all of it) so that many senders do not retry
// together.
func (s *Sender) backoff(attempt int, hint time.Duration) time.Duration {
	if hint > 0 {
		return hint + time.Duration(s.cfg.Jitter()*float64(hint)/10)
	}
	d := Exponential(s.cfg.BaseDelay, s.cfg.MaxDelay, attempt)
	return d/2 + time.Duration(s.cfg.Jitter()*float64(d/2))
}

// Exponential is base doubled for each attempt after the first, capped at
// most (and at most on overflow): the backoff of the Sender's attempts
// and of the outbox's (alerts/worker), each with its own jitter.
func Exponential(base, most time.Duration, attempt int) time.Duration {
	d := base << min(attempt-1, 20)
	if d > most || d <= 0 {
		d = most
	}
	return d
}

func jitter() float64 { return rand.Float64() }

// attempt makes one request. Its error's Reason is errTransient for what
// is worth retrying.
func (s *Sender) attempt(ctx context.Context, d alerts.Destination, method string, u *url.URL, id string, body []byte) (Result, time.Duration, *Error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.AttemptTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return Result{}, 0, &Error{Reason: ErrURL, Err: mask(err, d)}
	}
	req.Header.Set("User-Agent", "querylens-alerts")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if d.Kind == alerts.DestWebhook && body != nil {
		h, err := alerts.WebhookHeaders(d.Secret, id, s.cfg.Now(), body)
		if err != nil {
			return Result{}, 0, &Error{Reason: ErrURL, Err: err}
		}
		for k, v := range h {
			req.Header.Set(k, v)
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var de *Error
		if errors.As(err, &de) {
			return Result{}, 0, &Error{Reason: de.Reason, Detail: de.Detail}
		}
		return Result{}, 0, &Error{Reason: errTransient, Err: mask(err, d)}
	}
	// A failed read of the answer leaves it short; the status decides.
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	resp.Body.Close()
	status := resp.StatusCode
	switch {
	case status/100 == 2:
		// Delivered: never retried from here on, or it would post twice.
		// The message id is read when it can be (Board needs it and says
		// so when it is missing).
		res := Result{Status: status}
		if d.Kind == alerts.DestDiscord && method != http.MethodDelete {
			var msg struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(answer, &msg) == nil && digits(msg.ID) {
				res.MessageID = msg.ID
			}
		}
		return res, 0, nil
	case status == http.StatusTooManyRequests || status/100 == 5 || status == http.StatusRequestTimeout:
		hint, _ := RetryAfter(resp.Header.Get("Retry-After"), answer, s.cfg.Now())
		return Result{}, hint, &Error{Reason: errTransient, Status: status}
	case status == http.StatusNotFound && (method == http.MethodPatch || method == http.MethodDelete):
		return Result{}, 0, &Error{Reason: ErrGone, Status: status}
	}
	return Result{}, 0, &Error{Reason: ErrStatus, Status: status, Detail: scrub(discordMessage(answer), d)}
}

// discordMessage is the "message" of a Discord (or any JSON) error body,
// cut short.
func discordMessage(b []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &e) != nil {
		return ""
	}
	return alerts.CleanName(e.Message)
}

// RetryAfter is how long a 429 or 5xx asks to wait: Discord's JSON
// retry_after (seconds, a float) first, then the Retry-After header
// (seconds, or an HTTP date after now). False when neither says; the
// wait is at most a day (a longer one is a bad answer, taken as a day).
func RetryAfter(header string, body []byte, now time.Time) (time.Duration, bool) {
	const most = 24 * time.Hour
	clamp := func(secs float64) (time.Duration, bool) {
		if secs != secs || secs < 0 { // NaN or negative
			return 0, false
		}
		if secs > most.Seconds() {
			return most, true
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if len(body) > 0 && body[0] == '{' {
		var v struct {
			RetryAfter *float64 `json:"retry_after"`
		}
		if json.Unmarshal(body, &v) == nil && v.RetryAfter != nil {
			if d, ok := clamp(*v.RetryAfter); ok {
				return d, true
			}
		}
	}
	header = strings.TrimSpace(header)
	if header == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(header, 64); err == nil {
		return clamp(secs)
	}
	if t, err := http.ParseTime(header); err == nil {
		return clamp(t.Sub(now).Seconds())
	}
	return 0, false
}

// mask rewrites the URL inside net/http's errors (a *url.Error prints
// it) with the secrets masked, and scrubs what is left.
func mask(err error, d alerts.Destination) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		inner := ue.Err
		if inner != nil && scrub(inner.Error(), d) != inner.Error() {
			inner = errors.New(scrub(inner.Error(), d))
		} // else keep it, for errors.Is(err, context.DeadlineExceeded) and the like
		return &url.Error{Op: ue.Op, URL: alerts.MaskURL(ue.URL), Err: inner}
	}
	return errors.New(scrub(err.Error(), d))
}

// scrub replaces every secret of d in s: the URL, its path's segments
// past the ones MaskURL keeps, and the signing secret.
func scrub(s string, d alerts.Destination) string {
	var secrets []string
	if d.URL != "" {
		secrets = append(secrets, d.URL)
		if u, err := url.Parse(d.URL); err == nil {
			kept := strings.Split(strings.TrimPrefix(alerts.MaskURL(d.URL), u.Scheme+"://"+u.Host), "/")
			for _, seg := range strings.Split(u.Path, "/") {
				if len(seg) >= 8 && !contains(kept, seg) {
					secrets = append(secrets, seg)
				}
			}
			if u.RawQuery != "" {
				secrets = append(secrets, u.RawQuery)
			}
		}
	}
	if d.Secret != "" {
		secrets = append(secrets, d.Secret, strings.TrimPrefix(d.Secret, alerts.SecretPrefix))
	}
	for _, x := range secrets {
		if x != "" {
			s = strings.ReplaceAll(s, x, "***")
		}
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
