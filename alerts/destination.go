package alerts

import (
	"log/slog"
	"net/url"
	"strings"
)

// DestKind is where a destination is: a Discord webhook, a Slack incoming
// webhook, or anyone's HTTPS endpoint (a generic, signed webhook).
type DestKind string

const (
	DestDiscord DestKind = "discord"
	DestSlack   DestKind = "slack"
	DestWebhook DestKind = "webhook"
)

// Destination is one place to tell. URL and Secret are secrets (a
// Discord or Slack webhook URL is its own credential): String, GoString
// and LogValue mask them, and package deliver's errors never carry them.
type Destination struct {
	Name     string   `json:"name" toml:"name"`
	Kind     DestKind `json:"kind" toml:"kind"`
	URL      string   `json:"url" toml:"url"`
	Secret   string   `json:"secret,omitempty" toml:"secret"`       // webhook: the signing secret, whsec_…
	ThreadID string   `json:"thread_id,omitempty" toml:"thread_id"` // discord: post in this thread of a forum or channel
}

// String is the destination for logs: its name, kind and masked URL.
func (d Destination) String() string {
	return d.Name + " (" + string(d.Kind) + " " + MaskURL(d.URL) + ")"
}

// GoString masks as String does (for %#v).
func (d Destination) GoString() string { return "alerts.Destination{" + d.String() + "}" }

// LogValue masks as String does (for log/slog).
func (d Destination) LogValue() slog.Value { return slog.StringValue(d.String()) }

// MaskURL is a webhook URL with its secret parts replaced by "***": a
// Discord webhook keeps its id (https://discord.com/api/webhooks/123/***),
// a Slack one its workspace (https://hooks.slack.com/services/T123/***),
// any other its scheme and host. User info, query and fragment always
// go. What does not parse is "***" whole.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "***"
	}
	out := u.Scheme + "://" + u.Host
	segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	keep := 0
	switch {
	case len(segs) >= 3 && segs[0] == "api" && segs[1] == "webhooks":
		keep = 3
	case len(segs) >= 4 && segs[0] == "api" && strings.HasPrefix(segs[1], "v") && segs[2] == "webhooks":
		keep = 4
	case len(segs) >= 2 && segs[0] == "services":
		keep = 2
	}
	if keep > 0 {
		out += "/" + strings.Join(segs[:keep], "/")
		if len(segs) > keep || u.RawQuery != "" {
			out += "/***"
		}
		return out
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		out += "/***"
	}
	return out
}

// Message is one rendered event for one kind of destination: the body to
// send and the id it is sent under (Event.ID: the same on every retry).
type Message struct {
	ID   string
	Kind DestKind
	Body []byte
}

// Render is e's message for a destination of kind k.
func Render(k DestKind, e Event) Message {
	m := Message{ID: e.ID(), Kind: k}
	switch k {
	case DestDiscord:
		m.Body = DiscordEvent(e).JSON()
	case DestSlack:
		m.Body = SlackEvent(e).JSON()
	default:
		m.Body = WebhookEvent(e).JSON()
	}
	return m
}

// Delivery is one message for one destination, by the destination's
// name: what an outbox row holds (the secrets stay with the destination,
// not in the row).
type Delivery struct {
	Dest string
	Message
}

// Deliveries renders each event for each destination, events first:
// the rows to write in the transaction that stores the machine's new
// State.
func Deliveries(events []Event, to []Destination) []Delivery {
	var out []Delivery
	for _, e := range events {
		for _, d := range to {
			out = append(out, Delivery{Dest: d.Name, Message: Render(d.Kind, e)})
		}
	}
	return out
}
