package gamespy1

import (
	"slices"
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
)

// playerField says what a per-player key base ("frags" of frags_3) means.
type playerField uint8

const (
	pfOther playerField = iota // kept in the reply, not in the neutral view
	pfName
	pfScore  // score_N (Battlefield 1942's points)
	pfFrags  // frags_N (UT99, Medal of Honor)
	pfKills  // kills_N (Battlefield 1942)
	pfPing   // ping_N
	pfTeam   // team_N
	pfSecret // ngsecret_N: "bot" for UT99's bots
)

// playerBases are the per-player key bases of the dialects: UT99
// (player, frags, ping, team, mesh, skin, face, ngsecret), Battlefield 1942
// (playername, keyhash, kills, deaths, score, ping, team) and Medal of
// Honor (player, frags, deaths, ping). Any other key_N is a rule.
var playerBases = [...]struct {
	base string
	f    playerField
}{
	{"player", pfName}, {"playername", pfName}, {"score", pfScore}, {"frags", pfFrags},
	{"kills", pfKills}, {"ping", pfPing}, {"team", pfTeam}, {"ngsecret", pfSecret},
	{"deaths", pfOther}, {"skin", pfOther}, {"mesh", pfOther}, {"face", pfOther},
	{"keyhash", pfOther}, {"pid", pfOther}, {"skill", pfOther},
}

// playerKey splits key into a player key base and its index N: "frags_3"
// is frags of player 3. ok is false for keys that are not per-player (a
// base not listed, no digits, N above MaxPlayerIndex).
func playerKey(key string) (f playerField, n int, ok bool) {
	i := strings.LastIndexByte(key, '_')
	if i <= 0 || i == len(key)-1 || len(key)-i-1 > 4 {
		return 0, 0, false
	}
	n, ok = atoi(key[i+1:])
	if !ok || n > MaxPlayerIndex {
		return 0, 0, false
	}
	base := key[:i]
	for _, b := range playerBases {
		if codecs.EqualFoldASCII(base, b.base) {
			return b.f, n, true
		}
	}
	return 0, 0, false
}

// maxTeams bounds the N of teamname_N read as a team (Battlefield 1942
// has two); a higher N is a rule.
const maxTeams = 8

// teamKey reads Battlefield 1942's team names, teamname_N.
func teamKey(key string) (int, bool) {
	if len(key) < 10 || !codecs.EqualFoldASCII(key[:9], "teamname_") {
		return 0, false
	}
	n, ok := atoi(key[9:])
	return n, ok && n < maxTeams
}

// gathered is one player while the pairs are read.
type gathered struct {
	n     int
	p     codecs.Player
	score int // the rank of the key Score came from: score_ over frags_ over kills_
}

// info is the neutral view of a reassembled reply. Name is hostname, Map
// mapname (else maptitle), GameType gametype, Version gamever, Password
// password (1, true or yes), NumPlayers numplayers (else the players
// found), MaxPlayers maxplayers. Players are gathered from their N keys and
// sorted by N: the name from player_N or playername_N, the score from
// score_N, else frags_N, else kills_N, ping_N, team_N (the number as
// sent; UT99's 255, no team, is none) and ngsecret_N "bot". Team names come
// from teamname_N. Every other key is a rule, in wire order, repeated
// pairs (UT99 sends gamever in two datagrams) once. Text in the view has
// control characters dropped and is trimmed; rules are as sent.
func info(vars []Var) (in *codecs.Info, countDiffers bool) {
	in = &codecs.Info{}
	var ps []gathered
	find := func(n int) *gathered {
		for i := len(ps) - 1; i >= 0; i-- {
			if ps[i].n == n {
				return &ps[i]
			}
		}
		ps = append(ps, gathered{n: n})
		return &ps[len(ps)-1]
	}
	playerKeys := false
	for _, v := range vars {
		if f, n, ok := playerKey(v.Key); ok {
			playerKeys = true
			g := find(n)
			switch f {
			case pfName:
				g.p.Name = clean(v.Value)
			case pfScore, pfFrags, pfKills:
				rank := int(pfKills) - int(f) + 1 // score 3, frags 2, kills 1
				if rank > g.score {
					g.p.Score, _ = number(v.Value)
					g.score = rank
				}
			case pfPing:
				g.p.Ping, _ = number(v.Value)
			case pfTeam:
				t, ok := number(v.Value)
				g.p.Team, g.p.HasTeam = t, ok && t != 255
				if !g.p.HasTeam {
					g.p.Team = 0
				}
			case pfSecret:
				g.p.Bot = codecs.EqualFoldASCII(v.Value, "bot")
			}
			continue
		}
		if n, ok := teamKey(v.Key); ok {
			for len(in.Teams) <= n {
				in.Teams = append(in.Teams, codecs.Team{})
			}
			in.Has |= codecs.HasTeams
			in.Teams[n].Name = clean(v.Value)
			continue
		}
		if !slices.Contains(in.Rules, [2]string{v.Key, v.Value}) {
			in.Rules = append(in.Rules, [2]string{v.Key, v.Value})
		}
	}
	if len(in.Rules) > 0 {
		in.Has |= codecs.HasRules
	}
	r := Response{Vars: vars}
	text := func(key string, has codecs.InfoHas, dst *string) bool {
		if v, ok := r.Var(key); ok {
			in.Has |= has
			*dst = clean(v)
			return true
		}
		return false
	}
	text("hostname", codecs.HasName, &in.Name)
	if !text("mapname", codecs.HasMap, &in.Map) {
		text("maptitle", codecs.HasMap, &in.Map)
	}
	text("gametype", codecs.HasGameType, &in.GameType)
	text("gamever", codecs.HasVersion, &in.Version)
	if v, ok := r.Var("password"); ok {
		in.Has |= codecs.HasPassword
		v = strings.TrimSpace(v)
		in.Password = v == "1" || codecs.EqualFoldASCII(v, "true") || codecs.EqualFoldASCII(v, "yes")
	}
	if v, ok := r.Var("maxplayers"); ok {
		if n, ok := number(v); ok {
			in.Has |= codecs.HasMaxPlayers
			in.MaxPlayers = n
		}
	}
	slices.SortStableFunc(ps, func(a, b gathered) int { return a.n - b.n })
	in.Players = make([]codecs.Player, len(ps))
	for i := range ps {
		in.Players[i] = ps[i].p
	}
	num, hasNum := -1, false
	if v, ok := r.Var("numplayers"); ok {
		num, hasNum = number(v)
	}
	switch {
	case hasNum:
		in.Has |= codecs.HasNumPlayers
		in.NumPlayers = num
		countDiffers = playerKeys && num != len(ps)
		if playerKeys || num == 0 {
			in.Has |= codecs.HasPlayers
		}
	case playerKeys:
		in.Has |= codecs.HasNumPlayers | codecs.HasPlayers
		in.NumPlayers = len(ps)
	}
	return in, countDiffers
}

// number parses a decimal value the way the games write it: UT99 before
// patch 451 writes ping_N with a space before it (" 48").
func number(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil
}

// clean is text for the neutral view: control characters dropped, white
// space around it trimmed. The protocol has no colour codes.
func clean(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			b := make([]byte, 0, len(s))
			for j := 0; j < len(s); j++ {
				if s[j] >= 0x20 && s[j] != 0x7f {
					b = append(b, s[j])
				}
			}
			return strings.TrimSpace(string(b))
		}
	}
	return strings.TrimSpace(s)
}
