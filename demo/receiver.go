package demo

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DiscordReceiver is a Discord-shaped webhook receiver on loopback, to
// try alerts without Discord: it takes what a Discord webhook takes
// (POST /api/webhooks/{id}/{token}, with ?wait=true answering the message
// and its id; PATCH and DELETE of …/messages/{message_id}, 404 for a
// message it does not have) and keeps every message. It checks the
// shape querylens must send (JSON, at most 10 embeds, allowed_mentions
// with no parse) and answers 400 otherwise, as Discord would.
type DiscordReceiver struct {
	mu       sync.Mutex
	got      []Received
	messages map[string][]byte // live messages by id
	next     int
	changed  chan struct{} // closed and replaced at every change
	// Logf, when set, is told each request (the command prints them).
	Logf func(format string, args ...any)
}

// Received is one request a DiscordReceiver took.
type Received struct {
	Method    string // POST, PATCH or DELETE
	Webhook   string // {id}/{token}
	MessageID string // the id it answered (POST) or was asked for
	Body      []byte
	At        time.Time
}

// Content is the message's text: its content, and each embed's title
// and description, for tests and logs.
func (r Received) Content() string {
	var m struct {
		Content string `json:"content"`
		Embeds  []struct {
			Title       string `json:"title"`
			Description string `json:"description"`
		} `json:"embeds"`
	}
	json.Unmarshal(r.Body, &m)
	parts := []string{m.Content}
	for _, e := range m.Embeds {
		parts = append(parts, e.Title, e.Description)
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// NewDiscordReceiver returns an empty receiver.
func NewDiscordReceiver() *DiscordReceiver {
	return &DiscordReceiver{messages: map[string][]byte{}, changed: make(chan struct{}), next: 1000}
}

// Received lists every request taken, in order.
func (d *DiscordReceiver) Received() []Received {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Received(nil), d.got...)
}

// Wait returns once ok holds for the requests taken so far, or with
// ctx's error.
func (d *DiscordReceiver) Wait(ctx context.Context, ok func([]Received) bool) error {
	for {
		d.mu.Lock()
		got, ch := append([]Received(nil), d.got...), d.changed
		d.mu.Unlock()
		if ok(got) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Delete forgets a posted message, as a user deleting it in Discord.
func (d *DiscordReceiver) Delete(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.messages, id)
}

func (d *DiscordReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(segs) < 4 || segs[0] != "api" || segs[1] != "webhooks" {
		http.NotFound(w, r)
		return
	}
	hook := segs[2] + "/" + segs[3]
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	var msgID string
	switch {
	case len(segs) == 4 && r.Method == http.MethodPost:
	case len(segs) == 6 && segs[4] == "messages" && (r.Method == http.MethodPatch || r.Method == http.MethodDelete):
		msgID = segs[5]
	default:
		http.Error(w, `{"message": "405: Method Not Allowed", "code": 0}`, http.StatusMethodNotAllowed)
		return
	}
	if r.Method != http.MethodDelete {
		if msg := checkDiscord(body); msg != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"message": `+strconv.Quote(msg)+`, "code": 50035}`)
			return
		}
	}
	d.mu.Lock()
	if msgID != "" {
		if _, ok := d.messages[msgID]; !ok {
			d.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message": "Unknown Message", "code": 10008}`)
			return
		}
	} else {
		d.next++
		msgID = strconv.Itoa(d.next)
	}
	if r.Method == http.MethodDelete {
		delete(d.messages, msgID)
	} else {
		d.messages[msgID] = body
	}
	d.got = append(d.got, Received{Method: r.Method, Webhook: hook, MessageID: msgID, Body: body, At: time.Now()})
	close(d.changed)
	d.changed = make(chan struct{})
	logf := d.Logf
	d.mu.Unlock()
	if logf != nil {
		logf("discord receiver: %s message %s: %s", r.Method, msgID, Received{Body: body}.Content())
	}
	switch {
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && r.URL.Query().Get("wait") != "true":
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id": "`+msgID+`", "type": 0}`)
	}
}

// checkDiscord says what Discord would refuse in a message body, or "".
func checkDiscord(body []byte) string {
	var m struct {
		Content         *string           `json:"content"`
		Embeds          []json.RawMessage `json:"embeds"`
		AllowedMentions *struct {
			Parse []string `json:"parse"`
		} `json:"allowed_mentions"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return "Cannot send an empty message" // Discord's word for a body that is not a message
	}
	switch {
	case (m.Content == nil || *m.Content == "") && len(m.Embeds) == 0:
		return "Cannot send an empty message"
	case len(m.Embeds) > 10:
		return "Invalid Form Body (embeds: Must be 10 or fewer in length.)"
	case m.AllowedMentions == nil || len(m.AllowedMentions.Parse) != 0:
		return "querylens sends allowed_mentions with no parse"
	}
	return ""
}
