// Package deliver sends the messages of package alerts over HTTP: to
// Discord webhooks, Slack incoming webhooks and generic signed webhooks.
//
// A Sender checks, for each destination, that
//   - the URL is of its kind: https (AllowHTTP opens http to generic
//     webhooks and test hosts, never to Discord or Slack), Discord's
//     at discord.com or discordapp.com under /api/webhooks/{id}/{token},
//     Slack's at hooks.slack.com under /services/ (other hosts only as
//     Config.TestHosts, loopback fakes);
//   - every address its host resolves to passes the address rule
//     (Config.Allow, PublicAddr by default, or one of the operator's
//     Config.WebhookAllow ranges), and connects to the address checked:
//     the name is resolved once, in the dialer, so it cannot resolve to a
//     public address for the check and a private one for the connection.
//
// It uses no proxy from the environment, follows no redirect, gives each
// attempt AttemptTimeout (5 s) and reads at most MaxResponse (64 KiB) of
// an answer. It retries 429, 5xx and network failures with exponential
// backoff and jitter, honouring Discord's retry_after and Retry-After,
// within MaxAttempts and MaxWait, then reports ErrGaveUp; another 4xx is
// ErrStatus at once. It paces each destination with a token bucket
// (Discord: 5 per 2 s per webhook; Slack: 1 per second).
//
// A destination's URL and secret appear in no error and no log line:
// errors name the destination by alerts.MaskURL, and the *url.Error of
// net/http, which prints the URL, is rewritten with the URL masked.
//
// Delivery is at least once; see package alerts.
package deliver
