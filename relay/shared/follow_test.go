package shared

import (
	"context"
	"slices"
	"testing"
	"time"
)

func reply(s string) Reply { return Reply{Data: []byte(s), RTT: 7} }

func TestFollow(t *testing.T) {
	pending := func(cursor string, rs ...string) Entry {
		e := Entry{Status: Pending, Cursor: cursor}
		for _, r := range rs {
			e.Replies = append(e.Replies, reply(r))
		}
		return e
	}
	tests := []struct {
		name     string
		start    Entry
		waits    []waitResult
		closed   bool // the window is over before Follow starts
		closeIn  bool // the window closes while Wait blocks
		stopAt   int  // OnReply asks to stop at this reply (1-based)
		stopped  bool
		shutdown bool

		want        FollowResult
		wantReplies []string
		wantCursors []string
		wantEvents  []Event
		wantDown    bool // the cache is marked failed
	}{
		{
			name:  "pending, replies, done",
			start: pending("1", "a"),
			waits: []waitResult{{e: pending("2", "b")}, {e: Entry{Replies: []Reply{reply("c")}, Status: Done, TTL: 5 * time.Second, Cursor: "3"}}},
			want:  FollowResult{End: FollowDone, TTL: 5 * time.Second, Replies: 3}, wantReplies: []string{"a", "b", "c"},
			wantCursors: []string{"1", "2"}, wantEvents: []Event{EventCoalesced},
		},
		{
			name:  "cached",
			start: Entry{Replies: []Reply{reply("a"), reply("b")}, Status: Done, TTL: time.Second},
			want:  FollowResult{End: FollowDone, TTL: time.Second, Replies: 2}, wantReplies: []string{"a", "b"},
			wantEvents: []Event{EventHit},
		},
		{
			name:  "a wait slice passes",
			start: pending("1"),
			waits: []waitResult{{err: context.DeadlineExceeded}, {e: Entry{Replies: []Reply{reply("a")}, Status: Done}}},
			want:  FollowResult{End: FollowDone, Replies: 1}, wantReplies: []string{"a"},
			wantCursors: []string{"1", "1"}, wantEvents: []Event{EventCoalesced},
		},
		{
			name:  "full",
			start: pending("1", "a", "b", "c"), stopAt: 2,
			want: FollowResult{End: FollowFull, Replies: 2}, wantReplies: []string{"a", "b"},
			wantEvents: []Event{EventCoalesced},
		},
		{
			name:  "owner timed out",
			start: pending("1"), waits: []waitResult{{e: Entry{Status: Timeout}}},
			want:        FollowResult{End: FollowTimeout},
			wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced},
		},
		{
			name:  "owner limited",
			start: Entry{Status: Limited},
			want:  FollowResult{End: FollowLimited}, wantEvents: []Event{EventHit},
		},
		{
			name:  "abandoned before any reply",
			start: pending("1"), waits: []waitResult{{e: Entry{Status: Abandoned}}},
			want:        FollowResult{End: FollowAbandonedFallback},
			wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced, EventAbandoned, EventFallback},
		},
		{
			name:  "abandoned after a reply",
			start: pending("1", "a"), waits: []waitResult{{e: Entry{Status: Abandoned}}},
			want: FollowResult{End: FollowAbandoned, Replies: 1}, wantReplies: []string{"a"},
			wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced, EventAbandoned},
		},
		{
			name:  "abandoned after the window",
			start: Entry{Status: Abandoned}, closed: true,
			want: FollowResult{End: FollowAbandoned}, wantEvents: []Event{EventHit, EventAbandoned},
		},
		{
			name:  "window over, nothing came",
			start: pending("1"), closed: true,
			want: FollowResult{End: FollowExpired}, wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced},
		},
		{
			name:  "window closes mid-wait",
			start: pending("1"), closeIn: true,
			want: FollowResult{End: FollowExpired}, wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced},
		},
		{
			name:  "window over after a reply",
			start: pending("1", "a"), closed: true,
			want: FollowResult{End: FollowCancelled, Replies: 1}, wantReplies: []string{"a"},
			wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced},
		},
		{
			name:  "stopped",
			start: pending("1"), closeIn: true, stopped: true,
			want: FollowResult{End: FollowCancelled}, wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced},
		},
		{
			name:  "shutdown",
			start: pending("1", "a"), closeIn: true, stopped: true, shutdown: true,
			want: FollowResult{End: FollowShutdown, Replies: 1}, wantReplies: []string{"a"},
			wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced},
		},
		{
			name:  "store fails before any reply",
			start: pending("1"), waits: []waitResult{{err: errBoom}},
			want:        FollowResult{End: FollowStoreFallback},
			wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced, EventFallback}, wantDown: true,
		},
		{
			name:  "store fails after a reply",
			start: pending("1", "a"), waits: []waitResult{{err: errBoom}},
			want: FollowResult{End: FollowStoreFailed, Replies: 1}, wantReplies: []string{"a"},
			wantCursors: []string{"1"}, wantEvents: []Event{EventCoalesced}, wantDown: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.waits = tc.waits
			s, ev := newStores(t, f)
			// A window that does not end unless the case ends it: a
			// wrong wait fails the case instead of hanging it.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if tc.closed {
				cancel()
			}
			if tc.closeIn {
				f.onBlock = cancel
			}
			var got []string
			r := s.Follow(ctx, "k", tc.start, FollowHooks{
				OnReply: func(r Reply) bool {
					if r.RTT != 7 {
						t.Errorf("reply %q has RTT %d, want 7", r.Data, r.RTT)
					}
					got = append(got, string(r.Data))
					return len(got) == tc.stopAt
				},
				Stopped: func() (bool, bool) { return tc.stopped, tc.shutdown },
			})
			if r != tc.want {
				t.Errorf("Follow = %+v, want %+v", r, tc.want)
			}
			if r.End.Fallback() != (tc.want.End == FollowAbandonedFallback || tc.want.End == FollowStoreFallback) {
				t.Errorf("%v: Fallback() = %v", r.End, r.End.Fallback())
			}
			if !slices.Equal(got, tc.wantReplies) {
				t.Errorf("replies %q, want %q", got, tc.wantReplies)
			}
			if !slices.Equal(f.cursors, tc.wantCursors) {
				t.Errorf("waited from cursors %q, want %q", f.cursors, tc.wantCursors)
			}
			if e := ev.list(); !slices.Equal(e, tc.wantEvents) {
				t.Errorf("counted %v, want %v", e, tc.wantEvents)
			}
			if down := !s.CacheHealth.Usable(); down != tc.wantDown {
				t.Errorf("cache down %v, want %v", down, tc.wantDown)
			}
		})
	}
}
