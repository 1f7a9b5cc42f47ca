package alerts_test

import (
	"fmt"
	"time"

	"github.com/querylens/querylens/alerts"
)

// A server stops answering: the first two lost samples tell nothing, the
// third tells down; the first answer after it tells up.
func ExampleNext() {
	w := alerts.Watch{
		ID:     "duel",
		Server: alerts.Ref{Protocol: "zandronum", Addr: "203.0.113.7:10666"},
		Down:   true,
		Up:     true,
	}
	start := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	var st alerts.State // stored with the watch, as JSON
	for i, state := range []string{"online", "offline", "offline", "offline", "offline", "online"} {
		var events []alerts.Event
		st, events = alerts.Next(w, st, alerts.Sample{Time: start.Add(time.Duration(i) * time.Minute), State: state, Name: "Duel"})
		for _, e := range events {
			fmt.Println(e.Time.Format("15:04"), e.Kind, "since", e.Since.Format("15:04"), e.ID())
		}
	}
	// Output:
	// 20:03 down since 20:01 msg_d9339b4fd5b9f7e44bc25117eb412879
	// 20:05 up since 20:01 msg_696f7b0ddcdc40503bae0a86784ee855
}

// Each event becomes one message per destination: the rows of the outbox.
func ExampleDeliveries() {
	e := alerts.Event{Watch: "duel", Kind: alerts.KindFull, Time: time.Unix(1_800_000_000, 0),
		Server: alerts.Ref{Protocol: "zandronum", Addr: "203.0.113.7:10666"}, State: "online", Name: "Duel", NumPlayers: 8, MaxPlayers: 8}
	to := []alerts.Destination{
		{Name: "ops", Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/1/secret-token"},
		{Name: "pager", Kind: alerts.DestWebhook, URL: "https://alerts.example.com/hook"},
	}
	for _, d := range alerts.Deliveries([]alerts.Event{e}, to) {
		fmt.Println(d.Dest, d.Kind, d.ID, len(d.Body) > 0)
	}
	fmt.Println(to[0])
	// Output:
	// ops discord msg_7d165f5e2363a056ebcd9b0fdf58cc0b true
	// pager webhook msg_7d165f5e2363a056ebcd9b0fdf58cc0b true
	// ops (discord https://discord.com/api/webhooks/1/***)
}
