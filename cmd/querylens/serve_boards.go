package main

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/server"
)

// The live boards of several servers: a watches file's [[board]]
// (alerts.Board) keeps one Discord message (paged by alerts.DiscordBoard
// past an embed's room) edited in place when one of its servers changes
// what the board shows, and posts it again when someone deleted it.
//
//	sample of a board's server ─▶ boardsObserve: the server's row; changed?
//	                              every board showing it marked, the loop woken
//	boardsLoop ─▶ waits boardSettle (a burst of samples: one edit a board)
//	           ─▶ editBoard: ids stored (outbox.Boards) ─▶ deliver.Sender.Board
//	                         ─▶ the ids kept, posted anew if deleted
//
// A board's servers are pinned in the tracker like watched servers
// (boardPins, from sync), at the board's every or the watch's, the
// shorter.

// boardSettle is how long the loop waits after a change before it edits:
// the servers of a board sampled together change it once, and a board
// stays well inside Discord's pace (5 requests per 2 s per webhook).
var boardSettle = time.Second

// boardsRun is the boards' state, in alertsRun (mb).
type boardsRun struct {
	once sync.Once
	c    chan struct{} // wakes boardsLoop

	mu     sync.Mutex
	boards map[string]alerts.Board         // the file's, by id
	keys   map[history.Key][]string        // board ids by server
	refs   map[history.Key]alerts.Ref      // each server as a board names it
	rows   map[history.Key]alerts.BoardRow // each server as last sampled
	dirty  map[string]bool                 // boards to edit
	pinned map[history.Key]time.Duration   // the boards' servers pinned, at which interval
	mem    map[string][]string             // message ids, when the store keeps none
}

func (b *boardsRun) init() {
	b.once.Do(func() {
		b.c = make(chan struct{}, 1)
		b.boards, b.keys, b.refs = map[string]alerts.Board{}, map[history.Key][]string{}, map[history.Key]alerts.Ref{}
		b.rows, b.dirty, b.mem = map[history.Key]alerts.BoardRow{}, map[string]bool{}, map[string][]string{}
	})
}

func (b *boardsRun) wake() {
	select {
	case b.c <- struct{}{}:
	default:
	}
}

// checkBoardServers checks that querylens can ask every board's server
// and that the watches and the boards' servers together stay within max
// (--watch-max): each is pinned.
func checkBoardServers(f alerts.File, max int) error {
	servers := map[history.Key]bool{}
	for i, b := range f.Boards {
		for j, s := range b.Servers {
			ref, err := server.New(s.Protocol, s.Addr, s.Options)
			if err != nil {
				return errors.New("board " + strconv.Itoa(i+1) + " (" + strconv.Quote(alerts.Truncate(b.ID, 64)) + "): servers[" + strconv.Itoa(j) + "]: " + err.Error())
			}
			servers[ref.Key()] = true
		}
	}
	if n := len(f.Watches) + len(servers); n > max {
		return errors.New("the file's watches and boards' servers are " + strconv.Itoa(n) + ", more than --watch-max " + strconv.Itoa(max))
	}
	return nil
}

// setBoards takes the boards of a watches file just loaded: a board new
// or changed is edited soon; the stored ids of a board no longer in the
// file are forgotten (its message stays in the channel, no longer
// edited). Its servers are pinned by the sync that follows.
func (a *alertsRun) setBoards(ctx context.Context, boards []alerts.Board) {
	mb := &a.mb
	mb.init()
	mb.mu.Lock()
	old := mb.boards
	mb.boards = make(map[string]alerts.Board, len(boards))
	mb.keys, mb.refs = map[history.Key][]string{}, map[history.Key]alerts.Ref{}
	for _, b := range boards {
		mb.boards[b.ID] = b
		for _, s := range b.Servers {
			ref, err := server.New(s.Protocol, s.Addr, s.Options)
			if err != nil {
				continue // checkBoardServers refused the file
			}
			k := ref.Key()
			mb.keys[k] = append(mb.keys[k], b.ID)
			if _, ok := mb.refs[k]; !ok {
				mb.refs[k] = s
			}
		}
		if o, ok := old[b.ID]; !ok || !sameBoard(o, b) {
			mb.dirty[b.ID] = true
		}
	}
	for k := range mb.rows {
		if _, ok := mb.keys[k]; !ok {
			delete(mb.rows, k)
		}
	}
	var gone []string
	for id := range old {
		if _, ok := mb.boards[id]; !ok {
			gone = append(gone, id)
			delete(mb.dirty, id)
			delete(mb.mem, id)
		}
	}
	mb.mu.Unlock()
	if bs, ok := a.store.(outbox.Boards); ok {
		for _, id := range gone {
			if err := bs.DeleteBoardMessages(ctx, id); err != nil {
				a.logger.Warn("alerts: forgetting a board no longer in the file", "board", id, "err", err)
			}
		}
	}
	mb.wake()
}

// sameBoard reports whether x and y show alike.
func sameBoard(x, y alerts.Board) bool {
	return x.Title == y.Title && x.To == y.To && slices.EqualFunc(x.Servers, y.Servers, func(p, q alerts.Ref) bool {
		return p.String() == q.String() && len(p.Options) == len(q.Options)
	})
}

// boardPins adds the boards' servers to every (sync's pins, by server:
// the shorter interval wins) and, into old (the servers sync unpins when
// every lacks them), the servers the boards pinned last time.
func (a *alertsRun) boardPins(every map[history.Key]time.Duration, old map[history.Key][]string) {
	mb := &a.mb
	mb.init()
	mb.mu.Lock()
	defer mb.mu.Unlock()
	for k := range mb.pinned {
		if _, ok := old[k]; !ok {
			old[k] = nil
		}
	}
	mb.pinned = map[history.Key]time.Duration{}
	for k, ids := range mb.keys {
		e := history.DefaultPinEvery
		for _, id := range ids {
			if b := mb.boards[id]; b.Every > 0 {
				e = min(e, b.Every)
			}
		}
		mb.pinned[k] = e
		if cur, ok := every[k]; !ok || e < cur {
			every[k] = e
		}
	}
}

// boardsObserve is observe's for the boards: a sample of a board's
// server updates its row and, when the row changed, marks the boards
// showing it.
func (a *alertsRun) boardsObserve(k history.Key, rep server.Report) {
	mb := &a.mb
	mb.init()
	mb.mu.Lock()
	defer mb.mu.Unlock()
	ids := mb.keys[k]
	if len(ids) == 0 {
		return
	}
	s := alertSample(rep)
	prev, seen := mb.rows[k]
	row := prev
	row.Server = mb.refs[k]
	if row.State != s.State || !seen {
		row.State, row.Since = s.State, s.Time
	}
	if s.State == alerts.StateOnline {
		row.Name, row.Map, row.NumPlayers, row.MaxPlayers = s.Name, s.Map, s.NumPlayers, s.MaxPlayers
	}
	if seen && sameRow(row, prev) {
		return
	}
	mb.rows[k] = row
	for _, id := range ids {
		mb.dirty[id] = true
	}
	mb.wake()
}

// boardsLoop edits the boards marked: after a change it waits
// boardSettle, then edits each board marked once. A failed edit is tried
// again after a while.
func (a *alertsRun) boardsLoop(ctx context.Context) {
	mb := &a.mb
	mb.init()
	take := func() []string {
		mb.mu.Lock()
		defer mb.mu.Unlock()
		return takeSorted(mb.dirty)
	}
	again := func(id string) {
		mb.mu.Lock()
		if _, ok := mb.boards[id]; ok {
			mb.dirty[id] = true
		}
		mb.mu.Unlock()
	}
	editLoop(ctx, mb.c, boardSettle, take, a.editBoard, again, a.logger, "board")
}

// editBoard edits board id's messages (or posts them) and stores their
// ids: the ids stored last, since another instance sharing the database
// may have posted them.
func (a *alertsRun) editBoard(ctx context.Context, id string) error {
	mb := &a.mb
	mb.mu.Lock()
	b, ok := mb.boards[id]
	var rows []alerts.BoardRow
	for _, s := range b.Servers {
		row := alerts.BoardRow{Server: s}
		if ref, err := server.New(s.Protocol, s.Addr, s.Options); err == nil {
			if r, seen := mb.rows[ref.Key()]; seen {
				row = r
				row.Server = s
			}
		}
		rows = append(rows, row)
	}
	mem := mb.mem[id]
	mb.mu.Unlock()
	if !ok {
		return nil
	}
	d, ok := a.dest(b.To)
	if !ok || d.Kind != alerts.DestDiscord {
		return nil // the file's check refuses it; a reload under way
	}
	bs, stored := a.store.(outbox.Boards)
	ids := mem
	if stored {
		all, err := bs.BoardMessages(ctx)
		if err != nil {
			return err
		}
		ids = all[id]
	}
	pages := alerts.DiscordBoard(b.Heading(), rows, a.now())
	got, berr := a.sender.get().Board(ctx, d, ids, pages)
	if !slices.Equal(got, ids) {
		if stored {
			if err := bs.SetBoardMessages(ctx, id, got, a.now()); err != nil {
				return errors.Join(berr, err)
			}
		} else {
			mb.mu.Lock()
			mb.mem[id] = got
			mb.mu.Unlock()
		}
	}
	return berr
}
