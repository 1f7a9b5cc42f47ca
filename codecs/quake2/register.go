package quake2

import "github.com/querylens/querylens/codecs"

func init() {
	for _, d := range [...]Dialect{Quake2, QuakeWorld, Hexen2} {
		codecs.Register(&Codec{Dialect: d})
	}
	codecs.Describe(codecs.Description{
		Name: Protocol,
		// status lists every client.
		AllPlayers: true,
		// Quake II's masters answer "query" with one datagram; id's own
		// (192.246.40.37) is long gone and no community master is the
		// one every client asks, so none is the default.
		Master: &codecs.MasterDescription{Options: map[string]string{"master": "true"}, Port: DefaultMasterPort},
	})
	codecs.Describe(codecs.Description{
		Name:       ProtocolQuakeWorld,
		AllPlayers: true,
		// master.quakeworld.nu, the QuakeWorld community site's master,
		// among those QuakeWorld clients ship with
		// (docs/protocols/quake2.md, "Masters").
		Master: &codecs.MasterDescription{Options: map[string]string{"master": "true"},
			Default: "master.quakeworld.nu:27000", Port: DefaultMasterPortQW},
		// ezQuake registers qw:// and connects to the address after it.
		Join: "qw://{addr}",
	})
	codecs.Describe(codecs.Description{
		Name:       ProtocolHexen2,
		AllPlayers: true,
	})
}
