package ctxsleep

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"zero, live", context.Background(), 0, nil},
		{"negative, live", context.Background(), -time.Second, nil},
		{"zero, ended", done, 0, context.Canceled},
		{"short, live", context.Background(), time.Millisecond, nil},
		{"an hour, ended", done, time.Hour, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Sleep(tc.ctx, tc.d); !errors.Is(err, tc.want) {
				t.Errorf("Sleep = %v, want %v", err, tc.want)
			}
		})
	}
}
