package deliver

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/querylens/querylens/alerts"
)

// Board keeps a live status board on d: pages (alerts.DiscordBoard) go
// into the messages ids name, in order, edited in place
// (PATCH /webhooks/{id}/{token}/messages/{message_id}); a page without a
// message, or whose message was deleted (the edit answers 404), is posted
// anew; messages past the last page are deleted. It returns the ids to
// keep for next time, in page order, also on error (the pages done so
// far, the old ids for the rest), so that a failure loses no message.
//
// Only Discord can: Slack's incoming webhooks cannot edit
// (alerts.ErrSlackNoEdit), and a generic webhook has no message to edit.
func (s *Sender) Board(ctx context.Context, d alerts.Destination, ids []string, pages []alerts.DiscordMessage) ([]string, error) {
	switch d.Kind {
	case alerts.DestDiscord:
	case alerts.DestSlack:
		return ids, &Error{Dest: d.String(), Reason: ErrNoBoard, Err: alerts.ErrSlackNoEdit}
	default:
		return ids, &Error{Dest: d.String(), Reason: ErrNoBoard}
	}
	base, err := s.Check(d)
	if err != nil {
		return ids, err
	}
	out := append([]string(nil), ids...)
	for i, page := range pages {
		body := page.JSON()
		if i < len(ids) && digits(ids[i]) {
			_, err := s.do(ctx, d, http.MethodPatch, messageURL(base, ids[i]), "", body)
			if err == nil {
				continue
			}
			if !errors.Is(err, ErrGone) {
				return out, err
			}
			s.cfg.Logf("alerts: %s: status message %s is gone; posting it again", d.String(), ids[i])
		}
		u := *base
		q := u.Query()
		q.Set("wait", "true")
		u.RawQuery = q.Encode()
		res, err := s.do(ctx, d, http.MethodPost, &u, "", body)
		if err != nil {
			return out, err
		}
		if res.MessageID == "" {
			return out, &Error{Dest: d.String(), Reason: ErrResponse, Detail: "no message id"}
		}
		if i < len(out) {
			out[i] = res.MessageID
		} else {
			out = append(out, res.MessageID)
		}
	}
	for len(out) > len(pages) {
		last := out[len(out)-1]
		if digits(last) {
			if _, err := s.do(ctx, d, http.MethodDelete, messageURL(base, last), "", nil); err != nil && !errors.Is(err, ErrGone) {
				return out, err
			}
		}
		out = out[:len(out)-1]
	}
	return out, nil
}

// messageURL is the URL of one message of the webhook at base (thread_id
// kept).
func messageURL(base *url.URL, id string) *url.URL {
	u := *base
	u.Path += "/messages/" + id
	u.RawPath = ""
	return &u
}
