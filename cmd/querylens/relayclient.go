package main

import (
	"context"

	"github.com/querylens/querylens/relay"
)

func dialRelay(ctx context.Context, url string) (closer, error) {
	return relay.Dial(ctx, url, nil)
}
