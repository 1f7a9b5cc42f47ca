package server

import (
	"context"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/server/ident"
)

// scriptedExchanger answers each protocol's conversation with its reply
// after its delay; a protocol it has no reply for gets no reply.
type scriptedExchanger map[string]struct {
	delay time.Duration
	reply []byte
}

func (s scriptedExchanger) Exchange(ctx context.Context, protocol, _ string, q codecs.Query) (netquery.Result, error) {
	q.Start()
	a, ok := s[protocol]
	if !ok {
		<-ctx.Done()
		return netquery.Result{Sent: 1}, nil
	}
	select {
	case <-time.After(a.delay):
	case <-ctx.Done():
		return netquery.Result{Sent: 1}, ctx.Err()
	}
	_, done, _ := q.Feed(a.reply)
	return netquery.Result{Sent: 1, Received: 1, Done: done}, nil
}

// TestDetectPrefersTheDefaultPort: on 25565 Minecraft Java's List Ping is
// asked first and its answer kept even when another protocol (here
// Bedrock's, standing in for GameSpy v4's Query) answers sooner; when the
// List Ping does not answer, the other is taken.
func TestDetectPrefersTheDefaultPort(t *testing.T) {
	order, err := ident.DetectOrderAt(minecraft.DefaultPort, nil)
	if err != nil || order[0].Codec.Name() != minecraft.Protocol {
		t.Fatalf("DetectOrderAt(25565) starts with %v, %v", order[0].Codec.Name(), err)
	}
	second := order[1].Codec.Name()
	if d, _ := codecs.LookupDescription(second); !containsPort(d.Ports, minecraft.DefaultPort) {
		t.Errorf("second at 25565: %s, which does not list the port", second)
	}
	status := minecraft.AppendStatusResponse(nil, []byte(`{"description":"java","players":{"online":1,"max":2},"version":{"name":"1.21","protocol":767}}`))
	pong := minecraft.AppendBedrockResponse(nil, 0, 1, "MCPE;bedrock;1;1;0;1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ex := scriptedExchanger{
		minecraft.Protocol:        {200 * time.Millisecond, status},
		minecraft.BedrockProtocol: {0, pong},
	}
	d, err := Detect(ctx, ex, "127.0.0.1:25565", nil)
	if err != nil || d.Codec.Name() != minecraft.Protocol {
		t.Fatalf("Detect at 25565 = %v, %v; want the List Ping", d.Codec, err)
	}
	// Elsewhere the first answer wins.
	d, err = Detect(ctx, ex, "127.0.0.1:30000", nil)
	if err != nil || d.Codec.Name() != minecraft.BedrockProtocol {
		t.Fatalf("Detect at 30000 = %v, %v", d.Codec, err)
	}
	// No List Ping answer: the other is taken once it fails.
	fail := scriptedExchanger{minecraft.BedrockProtocol: {0, pong}}
	short, cancel2 := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel2()
	d, err = Detect(short, fail, "127.0.0.1:25565", nil)
	if err != nil || d.Codec.Name() != minecraft.BedrockProtocol {
		t.Fatalf("Detect at 25565, no List Ping = %v, %v", d.Codec, err)
	}
}

func containsPort(list []int, p int) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}
