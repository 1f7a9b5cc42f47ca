package alerts

import (
	"encoding/json"
	"strconv"
	"time"
)

// Discord's limits on a webhook message
// (https://discord.com/developers/docs/resources/message#embed-object-embed-limits).
// They count characters; this package counts them as Length does.
const (
	DiscordTitle       = 256
	DiscordDescription = 4096
	DiscordFields      = 25
	DiscordFieldName   = 256
	DiscordFieldValue  = 1024
	DiscordFooterText  = 2048
	DiscordEmbeds      = 10
	DiscordTotal       = 6000 // titles, descriptions, field names and values, footers, of all embeds
)

// DiscordMessage is the JSON body of a Discord webhook execution (or edit).
type DiscordMessage struct {
	Content         string          `json:"content,omitempty"`
	Embeds          []DiscordEmbed  `json:"embeds"`
	AllowedMentions AllowedMentions `json:"allowed_mentions"`
}

// AllowedMentions is always {"parse": []}: nothing in a message pings
// anyone, whatever a server calls itself.
type AllowedMentions struct {
	Parse []string `json:"parse"`
}

// DiscordEmbed is one embed.
type DiscordEmbed struct {
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Color       int            `json:"color"`
	Fields      []DiscordField `json:"fields,omitempty"`
	Footer      *DiscordFooter `json:"footer,omitempty"`
	Timestamp   string         `json:"timestamp,omitempty"` // ISO 8601
}

// DiscordField is one field of an embed.
type DiscordField struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline,omitempty"`
}

// DiscordFooter is an embed's footer.
type DiscordFooter struct {
	Text string `json:"text"`
}

// Colours of the embeds' left bar.
const (
	colourDown = 0xD93F3F
	colourWarn = 0xE8A33D
	colourUp   = 0x3FA660
	colourGrey = 0x8C8C8C
	colourInfo = 0x4A7FD9
)

func (t tone) colour() int {
	return [...]int{toneInfo: colourInfo, toneDown: colourDown, toneWarn: colourWarn, toneUp: colourUp, toneGrey: colourGrey}[t]
}

// DiscordEvent is the message telling e: one embed, within every limit.
func DiscordEvent(e Event) DiscordMessage {
	t := words(e, Discord, discordPlain)
	em := DiscordEmbed{
		Title:       t.title,
		Description: t.desc,
		Color:       e.Kind.tone().colour(),
		Footer:      &DiscordFooter{Text: "querylens · watch " + Discord(e.Watch)},
		Timestamp:   e.Time.UTC().Format(time.RFC3339),
	}
	for _, f := range t.fields {
		em.Fields = append(em.Fields, DiscordField{Name: f.name, Value: f.value, Inline: len(f.value) < 40})
	}
	m := DiscordMessage{Embeds: []DiscordEmbed{em}}
	m.Fit()
	return m
}

// discordPlain passes text this package wrote: its words carry no
// markdown.
func discordPlain(s string) string { return s }

// JSON is m's body, as sent.
func (m DiscordMessage) JSON() []byte {
	if m.AllowedMentions.Parse == nil {
		m.AllowedMentions.Parse = []string{}
	}
	if m.Embeds == nil {
		m.Embeds = []DiscordEmbed{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic("alerts: " + err.Error()) // only strings and ints: cannot fail
	}
	return b
}

// Fit enforces every one of Discord's limits on m, cutting texts with
// "…" (never inside a character) and dropping the embeds and fields past
// the counts. When the whole is over DiscordTotal, it cuts the last
// texts first: field values, then descriptions, from the last embed.
func (m *DiscordMessage) Fit() {
	m.AllowedMentions.Parse = []string{}
	m.Content = Truncate(m.Content, 2000)
	if len(m.Embeds) > DiscordEmbeds {
		m.Embeds = m.Embeds[:DiscordEmbeds]
	}
	for i := range m.Embeds {
		e := &m.Embeds[i]
		e.Title = Truncate(e.Title, DiscordTitle)
		e.Description = Truncate(e.Description, DiscordDescription)
		if len(e.Fields) > DiscordFields {
			e.Fields = e.Fields[:DiscordFields]
		}
		for j := range e.Fields {
			f := &e.Fields[j]
			f.Name = Truncate(nonEmpty(f.Name), DiscordFieldName)
			f.Value = Truncate(nonEmpty(f.Value), DiscordFieldValue)
		}
		if e.Footer != nil {
			e.Footer.Text = Truncate(e.Footer.Text, DiscordFooterText)
		}
	}
	over := m.total() - DiscordTotal
	for i := len(m.Embeds) - 1; i >= 0 && over > 0; i-- {
		e := &m.Embeds[i]
		for j := len(e.Fields) - 1; j >= 0 && over > 0; j-- {
			over -= shrink(&e.Fields[j].Value, over)
		}
		over -= shrink(&e.Description, over)
		for j := len(e.Fields) - 1; j >= 0 && over > 0; j-- {
			over -= shrink(&e.Fields[j].Name, over)
		}
		over -= shrink(&e.Title, over)
		if e.Footer != nil {
			over -= shrink(&e.Footer.Text, over)
		}
	}
}

// total is what Discord counts against DiscordTotal.
func (m *DiscordMessage) total() int {
	n := 0
	for _, e := range m.Embeds {
		n += e.total()
	}
	return n
}

func (e *DiscordEmbed) total() int {
	n := Length(e.Title) + Length(e.Description)
	for _, f := range e.Fields {
		n += Length(f.Name) + Length(f.Value)
	}
	if e.Footer != nil {
		n += Length(e.Footer.Text)
	}
	return n
}

// shrink cuts *s by up to by characters, keeping at least "…" of a
// non-empty text, and returns how much it cut.
func shrink(s *string, by int) int {
	if by <= 0 || *s == "" {
		return 0
	}
	n := Length(*s)
	limit := max(n-by, 1)
	*s = Truncate(*s, limit)
	return n - Length(*s)
}

// nonEmpty stands in for an empty field name or value, which Discord
// refuses.
func nonEmpty(s string) string {
	if s == "" {
		return "\u200b"
	}
	return s
}

// BoardRow is one server on a live status board.
type BoardRow struct {
	Server     Ref
	State      string // the last sample's state
	Name, Map  string
	NumPlayers int
	MaxPlayers int
	Since      time.Time // when the state began (zero: unknown)
}

// DiscordBoard lays rows out as the messages of a live status board: one
// field per server, 25 to an embed, as many embeds to a message as
// Discord's limits take (10, and DiscordTotal characters), and as many
// messages as needed. The caller posts the first time and edits
// afterwards (deliver.Sender.Board). now stamps every embed.
func DiscordBoard(title string, rows []BoardRow, now time.Time) []DiscordMessage {
	var msgs []DiscordMessage
	var cur DiscordMessage
	var em *DiscordEmbed
	stamp := now.UTC().Format(time.RFC3339)
	newEmbed := func() {
		cur.Embeds = append(cur.Embeds, DiscordEmbed{Color: colourInfo, Timestamp: stamp})
		em = &cur.Embeds[len(cur.Embeds)-1]
		if len(cur.Embeds) == 1 {
			em.Title = Truncate(Discord(title), DiscordTitle)
		}
	}
	flush := func() {
		if len(cur.Embeds) > 0 {
			msgs = append(msgs, cur)
		}
		cur, em = DiscordMessage{}, nil
	}
	const footerRoom = 64 // "querylens · page 10 of 10 · 1000 servers"
	for _, r := range rows {
		f := boardField(r)
		size := Length(f.Name) + Length(f.Value)
		if em != nil && cur.total()+size+footerRoom > DiscordTotal {
			flush()
		}
		if em == nil || len(em.Fields) == DiscordFields {
			if em != nil && len(cur.Embeds) == DiscordEmbeds {
				flush()
			}
			newEmbed()
		}
		em.Fields = append(em.Fields, f)
	}
	if len(rows) == 0 {
		newEmbed()
		em.Description = "No servers on this board."
	}
	flush()
	for i := range msgs {
		last := &msgs[i].Embeds[len(msgs[i].Embeds)-1]
		last.Footer = &DiscordFooter{Text: "querylens · page " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(msgs)) + " · " + plural(len(rows), "server")}
		msgs[i].Fit()
	}
	return msgs
}

// boardField is one server's field on a board.
func boardField(r BoardRow) DiscordField {
	name := Discord(r.Name)
	if name == "" {
		name = Discord(r.Server.String())
	}
	value := stateMark(r.State) + " " + Discord(stateLabel(r.State))
	if r.State == StateOnline {
		value += " · " + strconv.Itoa(r.NumPlayers) + "/" + strconv.Itoa(r.MaxPlayers)
		if m := Discord(r.Map); m != "" {
			value += " · " + m
		}
	}
	if !r.Since.IsZero() {
		value += " · since <t:" + strconv.FormatInt(r.Since.Unix(), 10) + ":R>"
	}
	if r.Name != "" {
		value += "\n" + Discord(r.Server.String())
	}
	return DiscordField{Name: Truncate(name, DiscordFieldName), Value: Truncate(value, DiscordFieldValue)}
}

// stateMark is a state's coloured dot.
func stateMark(state string) string {
	switch class(state) {
	case condUp:
		return "🟢"
	case condDown:
		return "🔴"
	case condMalformed:
		return "🟠"
	}
	return "⚪"
}

// stateLabel is a state for people (server.State's Label).
func stateLabel(state string) string {
	switch state {
	case StateOnline:
		return "Online"
	case StateRateLimited:
		return "Rate-limited"
	case StateBanned:
		return "Banned"
	case StateOffline:
		return "Offline"
	case StateMalformed:
		return "Malformed reply"
	case StateRefused:
		return "Refused by the relay"
	case StateLimited:
		return "Limited by the relay"
	case StateUnreachable:
		return "Unreachable"
	case "":
		return "Not asked yet"
	}
	return CleanName(state)
}
