package minecraft_test

import (
	"os"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
)

// A List Ping: the handshake and the status request in one write, the
// stream cut into packets by MessageLen, the status response decoded.
func Example() {
	q, _ := minecraft.AppendRequest(nil, minecraft.Request{ProtocolVersion: minecraft.PingProtocol, Host: "mc.example.org", Port: 25565})
	os.Stdout.WriteString(strconv.Itoa(len(q)) + " bytes to write\n")

	stream := minecraft.AppendStatusResponse(nil, []byte(`{"description":{"text":"A ","extra":[{"text":"server","color":"gold"}]},"players":{"online":2,"max":20},"version":{"name":"1.21.4","protocol":769}}`))
	n := minecraft.MessageLen(stream[:10])
	os.Stdout.WriteString("first 10 bytes: " + strconv.Itoa(n) + " (more needed)\n")
	n = minecraft.MessageLen(stream)
	m, err := (&minecraft.Codec{}).Decode([][]byte{stream[:n]}, codecs.DecodeOptions{})
	if err != nil {
		panic(err)
	}
	os.Stdout.WriteString(m.Info.Name + ", " + m.Info.Version + ", " + strconv.Itoa(m.Info.NumPlayers) + "/" + strconv.Itoa(m.Info.MaxPlayers) + "\n")
	// Output:
	// 27 bytes to write
	// first 10 bytes: 0 (more needed)
	// A server, 1.21.4, 2/20
}
