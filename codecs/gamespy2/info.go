package gamespy2

import (
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Info returns the protocol-neutral view of the reply: name (hostname),
// map (mapname), game_type (gametype), version (gamever), password,
// num_players (numplayers, else the player count), max_players
// (maxplayers), the players (player_, score_, ping_, team_, AIBot_), the
// teams (team_t, score_t) and every rule in wire order.
func (r *Response) Info() *codecs.Info {
	in := &codecs.Info{}
	if r.Sections&ServerSection != 0 {
		in.Has |= codecs.HasRules
		in.Rules = make([][2]string, len(r.Rules))
		for i, kv := range r.Rules {
			in.Rules[i] = [2]string{kv.Key, kv.Value}
		}
		text := func(key string, has codecs.InfoHas, dst *string) {
			if v, ok := r.Rule(key); ok {
				in.Has |= has
				*dst = v
			}
		}
		text("hostname", codecs.HasName, &in.Name)
		text("mapname", codecs.HasMap, &in.Map)
		text("gametype", codecs.HasGameType, &in.GameType)
		text("gamever", codecs.HasVersion, &in.Version)
		if v, ok := r.Rule("password"); ok {
			in.Has |= codecs.HasPassword
			in.Password = truthy(v)
		}
		if n, ok := r.intRule("numplayers"); ok {
			in.Has |= codecs.HasNumPlayers
			in.NumPlayers = n
		}
		if n, ok := r.intRule("maxplayers"); ok {
			in.Has |= codecs.HasMaxPlayers
			in.MaxPlayers = n
		}
	}
	if r.Sections&PlayerSection != 0 {
		in.Has |= codecs.HasPlayers
		in.Players = players(&r.Players)
		if in.Has&codecs.HasNumPlayers == 0 {
			in.Has |= codecs.HasNumPlayers
			in.NumPlayers = max(r.Players.Count, len(r.Players.Rows))
		}
	}
	if r.Sections&TeamSection != 0 {
		in.Has |= codecs.HasTeams
		t := &r.Teams
		in.Teams = make([]codecs.Team, len(t.Rows))
		name, score := t.Column("team_t"), t.Column("score_t")
		for i, row := range t.Rows {
			in.Teams[i].Name = cell(row, name)
			in.Teams[i].Score, _ = number(cell(row, score))
		}
	}
	return in
}

func players(t *Table) []codecs.Player {
	ps := make([]codecs.Player, len(t.Rows))
	name := t.Column("player_")
	if name < 0 {
		name = t.Column("name_")
	}
	score, ping, team, bot := t.Column("score_"), t.Column("ping_"), t.Column("team_"), t.Column("AIBot_")
	for i, row := range t.Rows {
		p := &ps[i]
		p.Name = cell(row, name)
		p.Score, _ = number(cell(row, score))
		p.Ping, _ = number(cell(row, ping))
		p.Team, p.HasTeam = number(cell(row, team))
		p.Bot = truthy(cell(row, bot))
	}
	return ps
}

func (r *Response) intRule(key string) (int, bool) {
	v, ok := r.Rule(key)
	if !ok {
		return 0, false
	}
	return number(v)
}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func cell(row []string, col int) string {
	if col < 0 || col >= len(row) {
		return ""
	}
	return row[col]
}

// number parses a decimal value the way games write them (spaces allowed
// around it).
func number(s string) (int, bool) {
	n, err := strconv.Atoi(wire.TrimSpace(s))
	return n, err == nil
}

// truthy is how clients read a boolean key: "1", "true" or "yes".
func truthy(s string) bool {
	return s == "1" || foldEqual(s, "true") || foldEqual(s, "yes")
}

// foldEqual is strings.EqualFold(s, lower) for a lower-case ASCII lower:
// besides ASCII case, U+017F folds to 's' and U+212A to 'k'.
func foldEqual(s, lower string) bool {
	i := 0
	for j := 0; j < len(lower); j++ {
		if i >= len(s) {
			return false
		}
		c, want := s[i], lower[j]
		switch {
		case c == want || c|0x20 == want && want >= 'a' && want <= 'z':
			i++
		case want == 's' && strings.HasPrefix(s[i:], "\u017f"):
			i += 2
		case want == 'k' && strings.HasPrefix(s[i:], "\u212a"):
			i += 3
		default:
			return false
		}
	}
	return i == len(s)
}
