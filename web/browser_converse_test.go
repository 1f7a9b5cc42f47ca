package web_test

import (
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// converseHarness runs converse or converseSummary (relay.js) with a fake
// relay and a fake decoder, stepping the replies by hand: the first query
// gets a split part (the decoder waits for more), then a challenge (the
// decoder asks again), and the follow-up gets the answer. It reports which
// queries were still open, not cancelled, once the follow-up was sent.
// Every wait is on an event of the page (a query sent, the event loop
// drained), never on the clock; the conversations' own timers are set far
// beyond the test.
const converseHarness = `(async (kind) => {
  const R = await import("/static/relay.js");
  const queries = [];
  let onQuery = () => {};
  const relay = {
    query(protocol, target, dg, handlers) {
      const id = queries.length + 1;
      queries.push({ id, handlers, cancelled: false, ended: false });
      onQuery();
      return id;
    },
    cancel(id) { const q = queries[id - 1]; if (q && !q.ended) q.cancelled = true; },
  };
  const asked = (n) => new Promise((res) => { onQuery = () => queries.length >= n && res(); onQuery(); });
  const drained = () => new Promise((res) => setTimeout(res, 0));
  const open = () => queries.filter((q) => !q.cancelled && !q.ended).map((q) => q.id);
  const PART = 0x50, CHALLENGE = 0x41, ANSWER = 0x49;
  const dec = {
    open: async () => ({ handle: 1, send: ["01"] }),
    step: async (h, b) => b[0] === CHALLENGE ? { send: ["02"] } : b[0] === ANSWER ? { done: true, summary: { row: [] } } : { send: [] },
    finish: async () => null,
  };
  const ql = {
    newQuery: () => ({
      start: () => [new Uint8Array([1])],
      feed: (b) => ({ send: b[0] === CHALLENGE ? [new Uint8Array([2])] : [], done: b[0] === ANSWER }),
      result: () => ({ ok: true }),
      close() {},
    }),
  };
  const opts = { timeoutMs: 3600000 };
  const p = kind === "converseSummary" ? R.converseSummary(dec, relay, "a2s", "127.0.0.1:27015", null, opts)
    : R.converse(ql, relay, "a2s", "127.0.0.1:27015", null, opts);
  await asked(1);
  queries[0].handlers.reply(new Uint8Array([PART]), 1, 0);
  await drained();
  const openAfterPart = open();
  queries[0].handlers.reply(new Uint8Array([CHALLENGE]), 1, 0);
  await asked(2);
  await drained();
  const openAfterChallenge = open();
  for (const q of queries) if (q.cancelled && !q.ended) (q.ended = true), q.handlers.end("cancelled", 0);
  queries[1].handlers.reply(new Uint8Array([ANSWER]), 1, 0);
  const out = await p;
  return { openAfterPart, openAfterChallenge, replies: out.replies, answered: (out.summary ?? out.message) != null };
})`

// TestBrowserConverseCancelsAnsweredQuery: a query whose reply made the
// decoder ask again (a challenge, or the next A2S step) is cancelled when
// the follow-up goes out, so that a conversation holds one relay query at
// a time. Left open, each holds one of the connection's MaxInFlight ids
// and one of the relay's upstream exchanges for the whole reply window:
// a thousand A2S rows (up to six queries each) then outgrew both, and
// most rows ended without an answer or refused as over their share.
func TestBrowserConverseCancelsAnsweredQuery(t *testing.T) {
	base := startStackNoMaster(t)
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		OpenAfterPart, OpenAfterChallenge []int
		Replies                           int
		Answered                          bool
	}
	for _, tc := range []struct{ fn string }{{"converse"}, {"converseSummary"}} {
		t.Run(tc.fn, func(t *testing.T) {
			got := eval[result](t, ctx, converseHarness+`("`+tc.fn+`")`)
			if !slices.Equal(got.OpenAfterPart, []int{1}) {
				t.Errorf("%s: open after a split part = %v, want [1] (the query still has more to give)", tc.fn, got.OpenAfterPart)
			}
			if !slices.Equal(got.OpenAfterChallenge, []int{2}) {
				t.Errorf("%s: open after the challenge's follow-up = %v, want [2] (the challenged query cancelled)", tc.fn, got.OpenAfterChallenge)
			}
			if got.Replies != 3 || !got.Answered {
				t.Errorf("%s: %d replies, answered %v; want 3 and an answer", tc.fn, got.Replies, got.Answered)
			}
		})
	}
}

// fakeClockJS, spliced into a harness's async function, replaces the
// page's setTimeout, clearTimeout and performance.now with a clock that
// moves only when the harness calls advance(ms), which fires the timers due by then in time
// order (a timer one of them sets fires too if it is due by then);
// drained waits, on the real clock, for the promise work pending. The
// harness restores the real timers with fakeClockEndJS in a finally.
const fakeClockJS = `
  const realSetTimeout = globalThis.setTimeout, realClearTimeout = globalThis.clearTimeout;
  let now = performance.now(), seq = 0;
  const timers = new Map();
  globalThis.setTimeout = (f, ms) => { timers.set(++seq, { f, at: now + (ms ?? 0) }); return seq; };
  globalThis.clearTimeout = (id) => { timers.delete(id); };
  performance.now = () => now;
  const advance = (ms) => {
    const until = now + ms;
    for (;;) {
      const due = [...timers].filter(([, tm]) => tm.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      timers.delete(due[0]);
      now = due[1].at;
      due[1].f();
    }
    now = until;
  };
  const drained = () => new Promise((res) => realSetTimeout(res, 0));
`

const fakeClockEndJS = `
    globalThis.setTimeout = realSetTimeout;
    globalThis.clearTimeout = realClearTimeout;
    delete performance.now;
  `

// converseTimerHarness runs a conversation of two queries (a challenge,
// then the answer) on a fake clock: the page's setTimeout is replaced by
// one that fires only when the harness advances the clock, so the test
// does not depend on real time. The challenge comes 0.9 of the timeout
// after the start, the answer 0.9 of it after the follow-up.
const converseTimerHarness = `(async (kind) => {
  const R = await import("/static/relay.js");
` + fakeClockJS + `  try {
    const queries = [];
    let onQuery = () => {};
    const relay = {
      query(protocol, target, dg, handlers) { queries.push({ handlers }); handlers.sent?.(); onQuery(); return queries.length; },
      cancel() {},
    };
    const asked = (n) => new Promise((res) => { onQuery = () => queries.length >= n && res(); onQuery(); });
    const CHALLENGE = 0x41, ANSWER = 0x49;
    const dec = {
      open: async () => ({ handle: 1, send: ["01"] }),
      step: async (h, b) => b[0] === CHALLENGE ? { send: ["02"] } : { done: true, summary: { row: [] } },
      finish: async () => null,
    };
    const ql = {
      newQuery: () => ({
        start: () => [new Uint8Array([1])],
        feed: (b) => ({ send: b[0] === CHALLENGE ? [new Uint8Array([2])] : [], done: b[0] === ANSWER }),
        result: () => ({ ok: true }),
        close() {},
      }),
    };
    const opts = { timeoutMs: 1000 };
    let settled = false;
    const p = (kind === "converseSummary" ? R.converseSummary(dec, relay, "a2s", "127.0.0.1:27015", null, opts)
      : R.converse(ql, relay, "a2s", "127.0.0.1:27015", null, opts)).then((out) => ((settled = true), out));
    await asked(1);
    advance(900);
    queries[0].handlers.reply(new Uint8Array([CHALLENGE]), 1, 0);
    await asked(2);
    await drained();
    advance(900);
    await drained();
    const endedEarly = settled;
    queries[1].handlers.reply(new Uint8Array([ANSWER]), 1, 0);
    await drained();
    advance(2000); // whatever is left of the timers
    const out = await p;
    return { endedEarly, replies: out.replies, timers: seq };
  } finally {` + fakeClockEndJS + `}
})`

// TestBrowserConverseTimeoutPerQuery: a conversation's timeout counts from
// its last query, not from its start, so that a server answering each of
// A2S's up to six steps in time is not cut off before the last.
func TestBrowserConverseTimeoutPerQuery(t *testing.T) {
	base := startStackNoMaster(t)
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"converse", "converseSummary"} {
		t.Run(fn, func(t *testing.T) {
			got := eval[struct {
				EndedEarly      bool
				Replies, Timers int
			}](t, ctx, converseTimerHarness+`("`+fn+`")`)
			if got.EndedEarly || got.Replies != 2 {
				t.Errorf("%s: ended before the answer %v, %d replies; want false and 2 (each query gets the whole timeout)", fn, got.EndedEarly, got.Replies)
			}
			// Each query's leaving (sent) and the follow-up move the
			// deadline; the first timer, firing before it, sets the one
			// more: a timer per query and per send would be four.
			if got.Timers > 2 {
				t.Errorf("%s: %d timers set for two queries; want at most 2 (a restarted wait moves its deadline, not its timer)", fn, got.Timers)
			}
		})
	}
}
