package historytest

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history/outbox"
)

// BoardStore stores the watches and the live boards' message ids.
type BoardStore interface {
	OutboxStore
	outbox.Boards
}

// RunBoards checks the boards' message ids: none at first, set, replace,
// several boards by id, an empty list kept as empty, delete (twice), and
// apart from the watches (a board and a watch of one id do not meet).
func RunBoards(t *testing.T, open func(t *testing.T) BoardStore) {
	s := open(t)
	defer s.Close()
	ctx := context.Background()
	if got, err := s.BoardMessages(ctx); err != nil || len(got) != 0 {
		t.Fatalf("a new store's boards: %v %v", got, err)
	}
	w := alerts.Watch{ID: "all", Server: alerts.Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"}, Board: true, To: []string{"ops"}}
	if err := s.PutWatch(ctx, w, outbox.OriginFile, T0); err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct {
		id  string
		ids []string
	}{{"all", []string{"1"}}, {"all", []string{"10", "11"}}, {"eu", nil}} {
		if err := s.SetBoardMessages(ctx, set.id, set.ids, T0); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{"all": {"10", "11"}, "eu": {}}
	got, err := s.BoardMessages(ctx)
	if err != nil || !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("boards = %v %v, want %v", got, err, want)
	}
	ws, err := s.Watches(ctx)
	if err != nil || len(ws) != 1 || len(ws[0].Board) != 0 {
		t.Fatalf("the watch of the board's id: %+v %v", ws, err)
	}
	for range 2 {
		if err := s.DeleteBoardMessages(ctx, "all"); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.BoardMessages(ctx); err != nil || len(got) != 1 || got["eu"] == nil {
		t.Fatalf("after a delete: %v %v", got, err)
	}
}

// MigrateToBoards opens a database with old (the schema before the
// boards), stores a watch, then opens it with cur: the watch stays, and
// boards can be stored.
func MigrateToBoards(t *testing.T, old func(t *testing.T) OutboxStore, cur func(t *testing.T) BoardStore) {
	ctx := context.Background()
	o := old(t)
	w := alerts.Watch{ID: "w1", Server: alerts.Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"}, Board: true, To: []string{"ops"}}
	if err := o.PutWatch(ctx, w, outbox.OriginFile, T0); err != nil {
		t.Fatal(err)
	}
	if err := o.SetBoard(ctx, "w1", []string{"7"}, T0); err != nil {
		t.Fatal(err)
	}
	if b, ok := o.(outbox.Boards); ok {
		if _, err := b.BoardMessages(ctx); err == nil {
			t.Fatal("a database before the boards lists boards")
		}
	}
	o.Close()
	s := cur(t)
	defer s.Close()
	ws, err := s.Watches(ctx)
	if err != nil || len(ws) != 1 || ws[0].Watch.ID != "w1" || !slices.Equal(ws[0].Board, []string{"7"}) {
		t.Fatalf("watches after the migration: %+v %v", ws, err)
	}
	if err := s.SetBoardMessages(ctx, "all", []string{"8", "9"}, T0); err != nil {
		t.Fatal(err)
	}
	if got, err := s.BoardMessages(ctx); err != nil || !slices.Equal(got["all"], []string{"8", "9"}) {
		t.Fatalf("boards after the migration: %v %v", got, err)
	}
}
