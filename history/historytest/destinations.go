package historytest

import (
	"context"
	"strings"
	"testing"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history/outbox"
)

// DestinationStore stores the watches and their destinations.
type DestinationStore interface {
	OutboxStore
	outbox.Destinations
}

// RunDestinations checks the stored destinations: put, replace, list by
// name with every field back, delete (twice), and an error that names
// the destination without its URL.
func RunDestinations(t *testing.T, open func(t *testing.T) DestinationStore) {
	s := open(t)
	defer s.Close()
	ctx := context.Background()
	hook := dests[1]
	hook.Name = outbox.DestName("w1")
	chat := dests[0]
	chat.Name, chat.ThreadID = outbox.DestName("w0"), "42"
	for _, d := range []alerts.Destination{hook, chat, hook} {
		if err := s.PutDestination(ctx, d, outbox.OriginCLI, T0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Destinations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != chat || got[1] != hook {
		t.Fatalf("destinations = %v, want %v and %v", got, chat, hook)
	}
	for range 2 {
		if err := s.DeleteDestination(ctx, chat.Name); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Destinations(ctx); err != nil || len(got) != 1 || got[0] != hook {
		t.Fatalf("after delete: %v, %v", got, err)
	}
	err = s.PutDestination(ctx, alerts.Destination{Kind: alerts.DestWebhook, URL: hook.URL}, outbox.OriginAPI, T0)
	if err == nil || strings.Contains(err.Error(), hook.URL) {
		t.Fatalf("a destination without a name: %v", err)
	}
}
