package main

import (
	"context"
	"errors"
)

func browserSection(ctx context.Context, e *env) (string, error) { return "", errors.New("todo") }
func gamedigSection(ctx context.Context, e *env) (string, error) { return "", errors.New("todo") }
func decoderSection(ctx context.Context, e *env) (string, error) { return "", errors.New("todo") }
func relaySection(ctx context.Context, e *env) (string, error)   { return "", errors.New("todo") }
