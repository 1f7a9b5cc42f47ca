package gamespy3

import (
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Warnings this package attaches to decoded messages, besides the shared
// codecs.WarnTruncated.
const (
	// A packet number came twice; the first copy is used.
	WarnDuplicatePacket = "duplicate packet"
	// Two runs of one field gave an item twice; the first value is used.
	WarnOverlap = "overlapping field values"
	// Stray "p" + digits tokens were skipped where a value belonged.
	WarnStray = "stray tokens skipped"
)

// Table is the player or team list of a reassembled reply: the field
// names in the order first seen ("player_", "score_"; teams "team_t") and
// one row per item, with "" where a field gave the item no value.
type Table struct {
	Fields []string
	Rows   [][]string
}

// Column returns the index of the field named name, or -1.
func (t *Table) Column(name string) int {
	for i, f := range t.Fields {
		if f == name {
			return i
		}
	}
	return -1
}

// Reply is a stat reply reassembled from its packets.
type Reply struct {
	Session uint32
	// Numbers are the packet numbers used, in order.
	Numbers []int
	Rules   []Rule
	// HasPlayers and HasTeams say the reply has a player or team field
	// (or a section marker), even one with no items.
	HasPlayers, HasTeams bool
	Players, Teams       Table
	Truncated            bool
}

// Reassemble joins the packets of one stat reply, given in any order:
// each packet number counts once (a duplicate is skipped with
// WarnDuplicatePacket), the server keys come from packet 0, and each
// field's runs are placed by their offsets, so a field continued in a
// later packet joins its start. A field is a team field when its name
// ends in "_t" or its section's marker is SectionTeams, else a player
// field: team fields never become player rows.
//
// A missing packet (the last one, or one before it) is an error wrapping
// codecs.ErrIncomplete, returned with the reply built from the packets
// that came. A packet numbered after the last one, two last packets, or
// packets of different sessions are errors wrapping codecs.ErrBadValue.
func Reassemble(packets []Response) (Reply, []string, error) {
	var rp Reply
	var warns []string
	warn := func(w string) {
		for _, x := range warns {
			if x == w {
				return
			}
		}
		warns = append(warns, w)
	}
	var byNumber [MaxPackets]*Response
	last := -1
	var err error
	for i := range packets {
		p := &packets[i]
		if p.Type != TypeStat {
			return rp, warns, newError("packets", 0, "", codecs.Detail(codecs.ErrBadValue, "a "+p.Type.String()+" reply is not a stat packet"))
		}
		if p.Number < 0 || p.Number >= MaxPackets {
			return rp, warns, newError("packet", 0, "", wire.Detailf(codecs.ErrTooLong, "packet number %d", int64(p.Number)))
		}
		if i > 0 && p.Session != packets[0].Session && err == nil {
			err = newError("session", 1, "", codecs.Detail(codecs.ErrBadValue, "packets of two sessions"))
		}
		if byNumber[p.Number] != nil {
			warn(WarnDuplicatePacket)
			continue
		}
		byNumber[p.Number] = p
		if p.Last {
			if last >= 0 && last != p.Number && err == nil {
				err = newError("packet", 0, "", wire.Detailf(codecs.ErrBadValue, "packets %d and %d both say they are the last", int64(last), int64(p.Number)))
			}
			last = max(last, p.Number)
		}
	}
	if len(packets) > 0 {
		rp.Session = packets[0].Session
	}
	if err == nil && last >= 0 {
		for n := last + 1; n < MaxPackets; n++ {
			if byNumber[n] != nil {
				err = newError("packet", 0, "", wire.Detailf(codecs.ErrBadValue, "packet %d after the last (%d)", int64(n), int64(last)))
				break
			}
		}
	}
	if err == nil {
		switch {
		case len(packets) == 0:
			err = newError("packets", 0, "", codecs.Detail(codecs.ErrIncomplete, "no packet"))
		case last < 0:
			err = newError("packets", 0, "", codecs.Detail(codecs.ErrIncomplete, "the last packet has not come"))
		default:
			for n := 0; n <= last; n++ {
				if byNumber[n] == nil {
					err = newError("packets", 0, "", wire.Detailf(codecs.ErrIncomplete, "packet %d of %d is missing", int64(n), int64(last+1)))
					break
				}
			}
		}
	}
	var players, teams columns
	for n, p := range byNumber {
		if p == nil {
			continue
		}
		rp.Numbers = append(rp.Numbers, n)
		if p.Truncated {
			rp.Truncated = true
			warn(codecs.WarnTruncated)
		}
		if n == 0 {
			rp.Rules = p.Rules
			for _, kv := range p.Rules {
				if len(kv.Stray) > 0 {
					warn(WarnStray)
				}
			}
		}
		for _, s := range p.Sections {
			switch s.Marker {
			case SectionPlayers:
				rp.HasPlayers = true
			case SectionTeams:
				rp.HasTeams = true
			}
			for i := range s.Fields {
				f := &s.Fields[i]
				cols := &players
				if f.Team() || s.Marker == SectionTeams {
					cols, rp.HasTeams = &teams, true
				} else {
					rp.HasPlayers = true
				}
				if cols.put(f) {
					warn(WarnOverlap)
				}
			}
		}
	}
	rp.Players, rp.Teams = players.table(), teams.table()
	return rp, warns, err
}

// columns accumulates the fields of one table.
type columns struct {
	names  []string
	values [][]string
	set    [][]bool
}

// put places f's values at their items; it reports whether an item
// already had a value (which is kept).
func (c *columns) put(f *Field) (overlap bool) {
	j := 0
	for j < len(c.names) && c.names[j] != f.Name {
		j++
	}
	if j == len(c.names) {
		c.names = append(c.names, f.Name)
		c.values = append(c.values, nil)
		c.set = append(c.set, nil)
	}
	end := f.Offset + len(f.Values)
	for len(c.values[j]) < end {
		c.values[j] = append(c.values[j], "")
		c.set[j] = append(c.set[j], false)
	}
	for k, v := range f.Values {
		i := f.Offset + k
		if c.set[j][i] {
			overlap = true
			continue
		}
		c.values[j][i], c.set[j][i] = v, true
	}
	return overlap
}

func (c *columns) table() Table {
	t := Table{Fields: c.names}
	n := 0
	for _, v := range c.values {
		n = max(n, len(v))
	}
	if n == 0 {
		return t
	}
	cells := make([]string, n*len(c.names))
	t.Rows = make([][]string, n)
	for i := range t.Rows {
		row := cells[i*len(c.names) : (i+1)*len(c.names) : (i+1)*len(c.names)]
		for j, v := range c.values {
			if i < len(v) {
				row[j] = v[i]
			}
		}
		t.Rows[i] = row
	}
	return t
}

// Info returns the protocol-neutral view: name (hostname, else
// servername), map (mapname, else Minecraft's map), game_type (gametype),
// version (gamever, else Minecraft's version), password, num_players
// (numplayers, else the player rows), max_players (maxplayers), the
// players (player_, else name_; score_, ping_, team_), the teams (team_t,
// score_t) and every server key as a rule, in wire order. Fields with
// no place there (deaths_, kills_, pid_, …) stay in the message's fields.
func (rp *Reply) Info() *codecs.Info {
	in := &codecs.Info{Has: codecs.HasRules, Rules: make([][2]string, len(rp.Rules))}
	for i, kv := range rp.Rules {
		in.Rules[i] = [2]string{kv.Key, kv.Value}
	}
	text := func(has codecs.InfoHas, dst *string, keys ...string) {
		for _, k := range keys {
			if v, ok := rp.Rule(k); ok {
				in.Has |= has
				*dst = v
				return
			}
		}
	}
	text(codecs.HasName, &in.Name, "hostname", "servername")
	text(codecs.HasMap, &in.Map, "mapname", "map")
	text(codecs.HasGameType, &in.GameType, "gametype")
	text(codecs.HasVersion, &in.Version, "gamever", "version")
	if v, ok := rp.Rule("password"); ok {
		in.Has |= codecs.HasPassword
		in.Password = v == "1" || v == "true" || v == "True" || v == "TRUE"
	}
	if n, ok := number(rp.Rule("numplayers")); ok {
		in.Has |= codecs.HasNumPlayers
		in.NumPlayers = n
	}
	if n, ok := number(rp.Rule("maxplayers")); ok {
		in.Has |= codecs.HasMaxPlayers
		in.MaxPlayers = n
	}
	if rp.HasPlayers {
		t := &rp.Players
		in.Has |= codecs.HasPlayers
		in.Players = make([]codecs.Player, len(t.Rows))
		name := t.Column("player_")
		if name < 0 {
			name = t.Column("name_")
		}
		score, ping, team := t.Column("score_"), t.Column("ping_"), t.Column("team_")
		for i, row := range t.Rows {
			p := &in.Players[i]
			p.Name = cell(row, name)
			p.Score, _ = number(cell(row, score), true)
			p.Ping, _ = number(cell(row, ping), true)
			p.Team, p.HasTeam = number(cell(row, team), true)
		}
		if in.Has&codecs.HasNumPlayers == 0 {
			in.Has |= codecs.HasNumPlayers
			in.NumPlayers = len(t.Rows)
		}
	}
	if rp.HasTeams {
		t := &rp.Teams
		in.Has |= codecs.HasTeams
		in.Teams = make([]codecs.Team, len(t.Rows))
		name, score := t.Column("team_t"), t.Column("score_t")
		for i, row := range t.Rows {
			in.Teams[i].Name = cell(row, name)
			in.Teams[i].Score, _ = number(cell(row, score), true)
		}
	}
	return in
}

// Rule returns the value of the first server key named key.
func (rp *Reply) Rule(key string) (string, bool) {
	for _, kv := range rp.Rules {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

func cell(row []string, col int) string {
	if col < 0 || col >= len(row) {
		return ""
	}
	return row[col]
}

// number parses a decimal value as games write them (spaces around it
// allowed); ok is false for a missing or non-numeric one.
func number(s string, present bool) (int, bool) {
	if !present {
		return 0, false
	}
	n, err := strconv.Atoi(wire.TrimSpace(s))
	return n, err == nil
}
