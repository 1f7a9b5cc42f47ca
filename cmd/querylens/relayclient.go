package main

import (
	"context"

	"github.com/querylens/querylens/relay/client"
)

func dialRelay(ctx context.Context, url string) (closer, error) {
	return client.Dial(ctx, url, nil)
}
