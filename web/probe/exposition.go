package probe

import (
	"strconv"
	"strings"

	"github.com/querylens/querylens/server"
)

// ContentType is the Prometheus text exposition format, version 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Metric names of the probe endpoint.
const (
	metricSuccess = "querylens_probe_success"
	metricPlayers = "querylens_probe_players"
	metricMax     = "querylens_probe_max_players"
	metricBots    = "querylens_probe_bots"
	metricRTT     = "querylens_probe_rtt_seconds"
	metricCached  = "querylens_probe_cached"
	metricState   = "querylens_probe_state"
	metricInfo    = "querylens_probe_info"
)

// AppendExposition appends the Prometheus text exposition of one probe's
// summary: success, one gauge per state (1 for s's state, 0 for the
// others, so that a state that ends is seen to end), where the server gave
// them its players, capacity, bots and round trip, and an info metric
// whose labels carry its name, map, game, protocol and address.
func AppendExposition(b []byte, s server.Summary) []byte {
	answered := s.State == server.Online
	b = appendGauge(b, metricSuccess, "Whether the server answered with its status (1) or not (0): see querylens_probe_state for why.", boolValue(answered))
	b = appendGauge(b, metricCached, "Whether the answer came from the relay's cache (1) instead of a query sent now (0).", boolValue(s.Source == server.SourceCache))
	if answered {
		b = appendGauge(b, metricPlayers, "Players on the server as it counts them, bots included.", strconv.Itoa(s.Players))
		b = appendGauge(b, metricMax, "The server's player capacity (max players, else max clients; 0 when it does not say).", strconv.Itoa(s.MaxPlayers))
		b = appendGauge(b, metricBots, "Bots among the players, where the protocol marks them.", strconv.Itoa(s.Bots))
	}
	if s.RTT > 0 {
		b = appendGauge(b, metricRTT, "Round trip of the query from the relay to the server, in seconds.", strconv.FormatFloat(s.RTT.Seconds(), 'g', -1, 64))
	}
	b = appendHeader(b, metricState, "The server's state: 1 for the state the query found, 0 for every other.")
	for _, st := range server.States() {
		b = append(b, metricState+`{state="`...)
		b = append(b, st.String()...)
		b = append(b, `"} `...)
		b = append(b, boolValue(st == s.State)...)
		b = append(b, '\n')
	}
	b = appendHeader(b, metricInfo, "The server's name, map and game as it last answered, with its protocol and address; always 1.")
	b = append(b, metricInfo+"{"...)
	b = appendLabel(b, "name", s.Name, false)
	b = appendLabel(b, "map", s.Map, true)
	b = appendLabel(b, "game", s.Game, true)
	b = appendLabel(b, "protocol", s.Protocol, true)
	b = appendLabel(b, "address", s.Address, true)
	b = append(b, "} 1\n"...)
	return b
}

func boolValue(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

func appendHeader(b []byte, name, help string) []byte {
	b = append(b, "# HELP "+name+" "+help+"\n# TYPE "+name+" gauge\n"...)
	return b
}

func appendGauge(b []byte, name, help, value string) []byte {
	b = appendHeader(b, name, help)
	return append(b, name+" "+value+"\n"...)
}

// appendLabel appends name="value" with the value escaped as the text
// format requires (backslash, double quote and line feed), and invalid
// UTF-8 replaced, since a label value must be UTF-8.
func appendLabel(b []byte, name, value string, comma bool) []byte {
	if comma {
		b = append(b, ',')
	}
	b = append(b, name+`="`...)
	value = strings.ToValidUTF8(value, "\uFFFD")
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
