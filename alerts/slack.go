package alerts

import (
	"encoding/json"
	"errors"
)

// Slack's limits on an incoming webhook message (Block Kit): a section's
// text and the fallback text are cut to these.
const (
	SlackSectionText = 3000
	SlackFieldText   = 2000
	SlackFields      = 10
)

// ErrSlackNoEdit is the answer to a live status message for Slack: an
// incoming webhook can only post, never edit or delete what it posted.
var ErrSlackNoEdit = errors.New("alerts: Slack incoming webhooks cannot edit a message, so a live status message needs Discord")

// SlackMessage is the JSON body of a Slack incoming webhook post: text is
// the fallback of notifications, blocks what the channel shows.
type SlackMessage struct {
	Text   string       `json:"text"`
	Blocks []SlackBlock `json:"blocks,omitempty"`
}

// SlackBlock is a section or a context block.
type SlackBlock struct {
	Type     string      `json:"type"`
	Text     *SlackText  `json:"text,omitempty"`
	Fields   []SlackText `json:"fields,omitempty"`
	Elements []SlackText `json:"elements,omitempty"`
}

// SlackText is a text object in mrkdwn.
type SlackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func mrkdwn(s string, limit int) SlackText {
	return SlackText{Type: "mrkdwn", Text: Truncate(s, limit)}
}

// SlackEvent is the message telling e.
func SlackEvent(e Event) SlackMessage {
	t := words(e, Slack, slackText)
	head := "*" + t.title + "*"
	if t.desc != "" {
		head += "\n" + t.desc
	}
	m := SlackMessage{Text: Truncate(t.title, SlackSectionText)}
	m.Blocks = append(m.Blocks, SlackBlock{Type: "section", Text: ptr(mrkdwn(head, SlackSectionText))})
	if len(t.fields) > 0 {
		b := SlackBlock{Type: "section"}
		for i, f := range t.fields {
			if i == SlackFields {
				break
			}
			b.Fields = append(b.Fields, mrkdwn("*"+f.name+"*\n"+f.value, SlackFieldText))
		}
		m.Blocks = append(m.Blocks, b)
	}
	m.Blocks = append(m.Blocks, SlackBlock{Type: "context", Elements: []SlackText{
		mrkdwn("querylens · watch "+Slack(e.Watch)+" · "+slackText(clock(e.Time)), SlackFieldText),
	}})
	return m
}

func ptr[T any](v T) *T { return &v }

// JSON is m's body, as sent.
func (m SlackMessage) JSON() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic("alerts: " + err.Error())
	}
	return b
}
