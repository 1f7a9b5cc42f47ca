package alerts

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// WebhookPayload is the body of a generic webhook, in Standard Webhooks'
// shape (type, timestamp, data). webhook.schema.json describes it.
type WebhookPayload struct {
	Type      string      `json:"type"`      // "server." + the event's Kind
	Timestamp string      `json:"timestamp"` // the sample's time, RFC 3339
	Data      WebhookData `json:"data"`
}

// WebhookData is what the event says. Names are cleaned (CleanName) but
// not escaped: a receiver escapes for where it shows them.
type WebhookData struct {
	Watch      string   `json:"watch"`
	Server     Ref      `json:"server"`
	State      string   `json:"state"`
	Error      string   `json:"error,omitempty"`
	Since      string   `json:"since,omitempty"`
	Name       string   `json:"name"`
	Map        string   `json:"map"`
	NumPlayers int      `json:"numplayers"`
	MaxPlayers int      `json:"maxplayers"`
	Players    []string `json:"players"` // the players when the list is known; empty otherwise
	Previous   string   `json:"previous,omitempty"`
	Joined     []string `json:"joined,omitempty"`
	Left       []string `json:"left,omitempty"`
	Limit      int      `json:"limit,omitempty"`
}

// WebhookEvent is the generic webhook's payload for e.
func WebhookEvent(e Event) WebhookPayload {
	d := WebhookData{
		Watch: e.Watch, Server: e.Server, State: e.State, Error: CleanName(e.Err),
		Name: CleanName(e.Name), Map: CleanName(e.Map), NumPlayers: e.NumPlayers, MaxPlayers: e.MaxPlayers,
		Players: cleanAll(e.Players), Previous: CleanName(e.Previous), Joined: cleanAll(e.Joined), Left: cleanAll(e.Left), Limit: e.Limit,
	}
	if d.Players == nil {
		d.Players = []string{}
	}
	if !e.Since.IsZero() {
		d.Since = e.Since.UTC().Format(time.RFC3339)
	}
	return WebhookPayload{Type: "server." + string(e.Kind), Timestamp: e.Time.UTC().Format(time.RFC3339), Data: d}
}

func cleanAll(names []string) []string {
	if names == nil {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = CleanName(n)
	}
	return out
}

// JSON is p's body, as sent.
func (p WebhookPayload) JSON() []byte {
	b, err := json.Marshal(p)
	if err != nil {
		panic("alerts: " + err.Error())
	}
	return b
}

// SecretPrefix starts a signing secret: "whsec_" and the base64 of the
// key, as Standard Webhooks spells it.
const SecretPrefix = "whsec_"

// ErrSecret is a signing secret that is not "whsec_" and base64 of 24 to
// 64 bytes. It never carries the secret.
var ErrSecret = errors.New("alerts: a signing secret is whsec_ followed by the base64 of 24 to 64 random bytes")

// ParseSecret returns the key of a "whsec_…" secret.
func ParseSecret(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, ErrSecret
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) < 24 || len(key) > 64 {
		return nil, ErrSecret
	}
	return key, nil
}

// NewSecret makes a secret of 32 bytes read from rand (crypto/rand.Reader).
func NewSecret(rand io.Reader) (string, error) {
	key := make([]byte, 32)
	if _, err := io.ReadFull(rand, key); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// Sign is Standard Webhooks' signature header of a message:
// "v1," and the base64 of HMAC-SHA256(key, id "." timestamp "." body),
// the timestamp in unix seconds. Each attempt signs anew with its own
// time; the id stays the message's.
func Sign(secret, id string, at time.Time, body []byte) (string, error) {
	key, err := ParseSecret(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, at.Unix(), 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// WebhookHeaders are the three headers of a signed message.
func WebhookHeaders(secret, id string, at time.Time, body []byte) (map[string]string, error) {
	sig, err := Sign(secret, id, at, body)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"webhook-id":        id,
		"webhook-timestamp": strconv.FormatInt(at.Unix(), 10),
		"webhook-signature": sig,
	}, nil
}
