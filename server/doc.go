// Package server is querylens's model of a game server, below every page,
// command and the history sampler:
//
//   - Ref, a server's identity (protocol, canonical host:port, and the
//     query options that change what is asked), with one parser and one
//     formatter for each of its spellings: the status page's path, a
//     history key, serve's --server flag, the command line's -o options,
//     text and JSON. A repeated option is an error in all of them, and
//     options a codec marks Echo (codecs.Option) are not part of it. The
//     parsing and formatting are package server/ident's, which is pure and
//     compiled into the browser module too; Ref adds the JSON form and the
//     history key.
//   - State, the one vocabulary of what asking a server found, shared with
//     the page scripts (static/model.js, generated): five states are the
//     server's doing and are recorded in the history, three (refused or
//     limited by the relay, unreachable) are not.
//   - Probe, the one way a page, the badge, the card and the sampler ask a
//     server (through the relay's Exchange, so its policy, cache and limits
//     apply), and Sample, a probe's Report as a history sample; Detect,
//     querylens query's probe of an address in every protocol at once.
//   - TrackMasters, which tracks what the masters list, within the
//     relay's own policy.
//   - Protocol, the protocol table: per protocol, what the pages, the
//     commands and the demo need beyond its codec.
//
// Pages turn a Report into HTML and nothing else.
package server
