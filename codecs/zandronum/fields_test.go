package zandronum

import (
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
)

// distinctResponse is extendedResponse with a different value in every
// scalar field, so that a key reading the wrong field cannot pass.
func distinctResponse() Response {
	r := extendedResponse()
	r.MaxClients, r.MaxPlayers, r.GameMode, r.Instagib, r.Buckshot = 101, 102, ModeCTF, 103, 104
	r.ForcePassword, r.ForceJoinPassword, r.Skill, r.BotSkill = 105, 106, 107, 108
	r.DMFlags = [3]uint32{1001, 1002, 1003}
	r.Limits = Limits{FragLimit: 2001, TimeLimit: 2002, TimeLeft: 2003, DuelLimit: 2004, PointLimit: 2005, WinLimit: 2006}
	r.Testing, r.Security, r.VoiceChat = 109, 110, 111
	r.DataMD5Sum = "d41d8cd98f00b204e9800998ecf8427e"
	return r
}

// spanKey is the key of Fields a span's field path belongs to:
// "limits.timeleft" -> "timeleft", "sqf2.country" -> "country",
// "players[2].name" -> "players", "pwads.count" -> "pwads".
func spanKey(path string) string {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "limits."), "sqf2.")
	if i := strings.IndexAny(path, ".["); i >= 0 {
		path = path[:i]
	}
	return path
}

// TestFieldsTable: responseFields is a table of keys that each read their
// own value, so inserting or moving an entry cannot shift the others.
// This checks what the table cannot show by itself: the keys follow the
// decoder's wire order, and each scalar key's value is the one the
// decoder read for the field of that name.
func TestFieldsTable(t *testing.T) {
	seen := map[string]bool{}
	for i, f := range responseFields {
		if seen[f.key] {
			t.Errorf("key %q twice", f.key)
		}
		seen[f.key] = true
		if i > 0 && f.bit < responseFields[i-1].bit {
			t.Errorf("key %q (bit %d) after bit %d: not in wire order", f.key, f.bit, responseFields[i-1].bit)
		}
	}

	b, err := AppendResponse(nil, distinctResponse())
	noErr(t, "AppendResponse", err)
	m, err := (&Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
	noErr(t, "Decode", err)

	var order []string // keys in the order the decoder read them
	spanValue := map[string]string{}
	for _, s := range m.Spans {
		if s.Layer != 1 {
			continue
		}
		k := spanKey(s.Field)
		if len(order) == 0 || order[len(order)-1] != k {
			order = append(order, k)
		}
		if s.Field == k || s.Field == "limits."+k || s.Field == "sqf2."+k {
			spanValue[k] = s.Value
		}
	}
	var keys []string
	for _, kv := range m.Fields {
		keys = append(keys, kv.Key)
	}
	if got, want := strings.Join(keys, " "), strings.Join(order, " ")+" trailing_bytes"; got != want {
		t.Errorf("Fields keys\n got %s\nwant %s (the decoder's order)", got, want)
	}
	checked := 0
	for _, kv := range m.Fields {
		var v string
		switch x := kv.Value.(type) {
		case string:
			v = x
		case uint8:
			v = strconv.Itoa(int(x))
		case uint16:
			v = strconv.Itoa(int(x))
		case uint32:
			if strings.HasPrefix(kv.Key, "flags") {
				continue // shown as hex and names
			}
			v = strconv.FormatUint(uint64(x), 10)
		default:
			continue // lists: their elements have spans of their own
		}
		sv, ok := spanValue[kv.Key]
		if kv.Key == "gamemode" {
			sv, ok = strings.CutSuffix(sv, " "+ModeCTF.String())
			sv = strings.TrimSpace(sv)
		}
		if !ok || sv != v {
			t.Errorf("%s = %q; the decoder read %q", kv.Key, v, spanValue[kv.Key])
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("only %d scalar keys checked", checked)
	}
}
