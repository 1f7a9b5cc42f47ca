package main

import (
	"context"
	"errors"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/relay"
)

func dialRelay(ctx context.Context, url string) (closer, error) {
	return relay.Dial(ctx, url, nil)
}

// relayError turns a relay's refusal into json.md's error, naming the rule
// that refused in the field and the message.
func relayError(protocol string, err error) error {
	var re *relay.RefusedError
	if errors.As(err, &re) {
		return &codecs.Error{Protocol: protocol, Field: "relay." + re.Code.String(),
			Err: errors.New("refused by the relay (" + re.Code.String() + "): " + re.Message)}
	}
	return &codecs.Error{Protocol: protocol, Field: "target", Err: err}
}
