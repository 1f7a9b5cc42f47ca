// Package alerts tells a game server's admins, in Discord, Slack or their
// own webhook, when their server goes down, comes back, fills up, empties,
// changes map or name, or when a player joins or leaves.
//
// It is pure logic: watches (Watch), the state machine (Next), and the
// messages (DiscordEvent, DiscordBoard, SlackEvent, WebhookEvent, Render).
// Package alerts/deliver sends them over HTTP. Neither stores anything nor
// runs on its own: the server feeds samples in and keeps what comes out.
//
// # The machine
//
//	samples ─▶ Next(watch, State, Sample) ─▶ (State, []Event)
//
// Next is deterministic: its only clock is the samples' times, and its
// memory is State, a small struct that marshals to JSON. Store it with
// the watch; a restart that replays samples already seen tells nothing
// twice, and one that resumes from the stored State loses no transition.
// The rules are in Next's comment, each one tested in machine_test.go:
// a down is three offline or unreachable samples in a row (or a time), a
// single lost sample tells nothing, up is told only after a down was,
// rate-limited and banned are answers, malformed is its own event, the
// relay's own refusals are never down ("cannot check" once they last),
// mute windows hold every event and tell a lasting down once after,
// joins and leaves of one sample are one event, capped per hour.
//
// Joins and leaves need complete player lists: Watch.Validate refuses
// them for a protocol whose replies list only some players (the caller
// says which, from the codec), and a sample whose list is partial
// (Sample.PlayersComplete false) starts a new baseline instead of
// telling everyone as left.
//
// Server, map and player names are the server's to choose, and hostile:
// CleanName strips colour codes (as the pages do, codecs.StripColors),
// control and format characters (newlines, the right-to-left override)
// and cuts them to MaxName; Discord escapes markdown and breaks mentions
// (and every Discord message carries allowed_mentions {"parse": []});
// Slack escapes &, < and >; the generic webhook sends them cleaned,
// unescaped, in JSON.
//
// # Destinations
//
//   - Discord webhooks: one embed per event, every one of Discord's limits
//     enforced (Fit). A live status board (DiscordBoard) is one or more
//     messages edited in place by deliver.Sender.Board, and posted again
//     when someone deleted them.
//   - Slack incoming webhooks: a text fallback and mrkdwn blocks. Slack's
//     incoming webhooks cannot edit or delete what they post, so a live
//     status board is refused for Slack (ErrSlackNoEdit): use Discord.
//   - Generic webhooks: a JSON payload (WebhookPayload, described by
//     webhook.schema.json) signed per Standard Webhooks
//     (https://www.standardwebhooks.com): webhook-id, webhook-timestamp,
//     webhook-signature "v1,<base64 HMAC-SHA256>", the secret "whsec_" and
//     base64. The test has the reference library verify it
//     (tools/standardwebhooks).
//
// A destination's URL is its credential: Destination's String, GoString
// and LogValue mask it (MaskURL), and deliver's errors and log lines never
// carry it.
//
// # Delivery: at least once
//
// Each event has a stable id (Event.ID, from watch, kind and sample time),
// sent as webhook-id on every attempt of its message, so a receiver of
// generic webhooks deduplicates on it. Discord and Slack do not
// deduplicate: a message whose answer was lost (a crash between the post
// and the outbox row's update, a timeout after the post went through) may
// appear twice. Nothing is lost: a message leaves the outbox only after a
// success, or after deliver gave up (reported, and kept for the operator
// to see).
//
// # Wiring
//
//	tracker sample ─▶ worker.Holder.Apply ─▶ outbox.Store.Apply, in one
//	                  history-database transaction: read the watch's
//	                  State, Next, UPDATE the State, INSERT one outbox row
//	                  per Deliveries(events, file.To(watch))
//	worker.Worker ─▶ Claim ─▶ deliver.Sender.Send ─▶ DELETE the row
//	                                              (or retry it later, or mark it failed)
//
// Done: the tables (history schema step 2, history/outbox's Store,
// implemented by history/sqlstore for SQLite and PostgreSQL), the worker
// (alerts/worker, with the Holder that keeps samples while the database
// is down), and querylens serve's wiring (cmd/querylens/serve_alerts.go):
// --watches FILE (ParseFile; each watch PutWatch'd with origin file, its
// State kept by id; reloaded on SIGHUP, the file's watches no longer in
// it deleted, an invalid file keeping the running ones), --webhook-allow,
// --allow-http-webhooks, --watch-max; the stored watches' servers pinned
// in the tracker (history.Tracker.Pin: sampled at Watch.Every, never
// evicted, floored by the relay's per-target limits); every probe of a
// pinned server handed to Holder.Apply (Sample from server.State's
// String, the decoded summary and codecs.Description.AllPlayers), then
// Worker.Wake; one Worker per instance, its Dest the file's destinations
// by name, else the stored ones (outbox.Destinations, named
// outbox.DestName(id), read again at each send so that one deleted with
// its watch is never used; the sender's loopback test hosts and the
// observe side read them with the watches every 30 s and on SIGHUP);
// the live board (Watch.Board: after a sample that changed its
// row, deliver.Sender.Board on the watch's first Discord destination
// with its stored ids, then SetBoard); the alerts' series on /metrics;
// the live boards of several servers (a watches file's [[board]],
// Board: one Discord destination, Slack refused, its servers pinned like
// watched ones; after samples that change what it shows, one edit per
// board a second at most, cmd/querylens/serve_boards.go; its message ids
// in the history's boards table, outbox.Boards, schema step 4); the
// demo's flapping server and a Discord-shaped receiver
// (testdata/watches.demo.toml); querylens watch add|list|rm|test and
// /api/v1/watches behind --admin-token (alerts/manage: each watch with
// a destination of its own in the history database, checked with
// serve's --webhook-allow, --allow-http-webhooks, --watch-max and
// codecs.Description.AllPlayers; every and board as the file's), the
// failed rows, and the status page's watched badge. What that still
// needs:
//
//   - A watch made by hand is sampled within 30 s of its making (the
//     stored watches are read on a timer); a change notification
//     (PostgreSQL LISTEN, or the API's own serve told at once) would
//     make it immediate.
//   - Editing a watch in place (PATCH /api/v1/watches/{id}, watch edit):
//     today it is removed and added again.
//   - A board's servers named by the ids of watches (a [[board]] names
//     servers, watched or not); boards made by the CLI or the API (only
//     the watches file has them); a board on a watch's page.
//
// # Discord in three steps
//
//  1. In Discord, Server Settings → Integrations → Webhooks → New Webhook;
//     pick the channel, then Copy Webhook URL.
//  2. On the querylens host, run querylens watch add --discord URL --down
//     --up zandronum/203.0.113.7:10666 (the URL in single quotes), or add
//     a [[destination]] and a [[watch]] to the watches file, as
//     testdata/watches.example.toml shows, and send SIGHUP.
//  3. querylens watch test <id> posts one sample message; keep the URL
//     secret (anyone with it can post in the channel).
package alerts
