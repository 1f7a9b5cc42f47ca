package main

import (
	"context"
	"errors"
	"io"
)

// These commands are wired to relay/, web/ and demo/ as those packages land.

func (e *env) serve(args []string) int {
	io.WriteString(e.stderr, "querylens serve: not available in this build\n")
	return exitUsage
}

func (e *env) demo(args []string) int {
	io.WriteString(e.stderr, "querylens demo: not available in this build\n")
	return exitUsage
}

func dialRelay(ctx context.Context, url string) (closer, error) {
	return nil, errors.New("relay client not available in this build")
}

func relayError(protocol string, err error) error { return err }
