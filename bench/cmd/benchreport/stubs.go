package main

import (
	"context"
	"errors"
)

func browserSection(ctx context.Context, e *env) (string, error) { return "", errors.New("todo") }
