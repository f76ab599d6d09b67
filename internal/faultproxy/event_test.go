package faultproxy

import (
	"context"
	"errors"
	"io"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// Events (Fault.Before) run at an exact point of a client's run: after every earlier command of
// the connection was answered, before the matching command reaches the server.

func TestProxy_BeforeRunsOnceBetweenTheEarlierCommandsAndTheMatchingOne(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := srv.Client()
	defer admin.Close()
	ctx := context.Background()
	key := valkeytest.Key(t, "{%s}:k")
	var runs int
	var sawBefore string
	// The second GET of key (After 1), once (Times 1).
	p := StartProxyT(t, srv.Addr(), Fault{Command: "GET", Key: key, After: 1, Times: 1, Before: func() {
		runs++
		sawBefore = admin.Get(ctx, key).Val()
		if err := admin.Set(ctx, key, "event", 0).Err(); err != nil {
			t.Error(err)
		}
	}})
	p.KeepLog()
	rdb := proxiedClient(t, p)
	var gets []*redis.StringCmd
	// One pipeline, written at once: the event must still come after SET b ran, and before the
	// GET after it reached the server.
	_, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, key, "a", 0)
		gets = append(gets, pipe.Get(ctx, key))
		pipe.Set(ctx, key, "b", 0)
		gets = append(gets, pipe.Get(ctx, key), pipe.Get(ctx, key))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 1 || sawBefore != "b" {
		t.Errorf("the event ran %d times and saw %q before it; want once, after SET b ran", runs, sawBefore)
	}
	for i, want := range []string{"a", "event", "event"} {
		if got := gets[i].Val(); got != want {
			t.Errorf("GET %d = %q, want %q: the event runs right before the second GET reaches the server", i, got, want)
		}
	}
	var before []int
	for _, r := range p.Log() {
		if r.Command == "GET" {
			before = append(before, r.Before)
		}
	}
	if len(before) != 3 || before[0] != 0 || before[1] != 1 || before[2] != 0 {
		t.Errorf("the log's Before of the three GETs: %v, want [0 1 0]", before)
	}
	if p.Hits() != 1 {
		t.Errorf("hits %d, want the one event", p.Hits())
	}
}

func TestProxy_BeforeLeavesTheReplyToTheOtherFaults(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := srv.Client()
	defer admin.Close()
	ctx := context.Background()
	key := valkeytest.Key(t, "{%s}:k")
	p := StartProxyT(t, srv.Addr(),
		Fault{Command: "SET", Key: key, Times: 1, Before: func() { _ = admin.Set(ctx, key, "event", 0).Err() }},
		Fault{Command: "SET", Key: key, Times: 1, Action: DropReply})
	p.KeepLog()
	err := proxiedClient(t, p).Set(ctx, key, "client", 0).Err()
	if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("SET with an event and a dropped reply: %v, want the connection cut", err)
	}
	if got := admin.Get(ctx, key).Val(); got != "client" {
		t.Errorf("the server holds %q; want the client's SET, which ran after the event's", got)
	}
	for _, r := range p.Log() {
		if r.Command == "SET" && (r.Before != 1 || r.Action != DropReply || !r.Ran || r.Delivered) {
			t.Errorf("the SET's record: %+v; want one event, then its reply dropped", r)
		}
	}
}

// A server restarted by the event before the command is passed on never runs it: the proxy's
// connection to the old process is gone, so the command is written and its reply never comes.
func TestProxy_BeforeRestartingTheServerLosesTheCommand(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	ctx := context.Background()
	key := valkeytest.Key(t, "{%s}:k")
	p := StartProxyT(t, srv.Addr(), Fault{Command: "SET", Key: key, Times: 1, Before: func() {
		srv.Stop()
		if err := srv.Restart(); err != nil {
			t.Error(err)
		}
	}})
	p.KeepLog()
	rdb := proxiedClient(t, p)
	if err := rdb.Ping(ctx).Err(); err != nil { // the connection opens before the restart
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, key, "client", 0).Err(); err == nil {
		t.Error("SET across the restart succeeded; want its connection lost")
	}
	admin := srv.Client()
	defer admin.Close()
	if n := admin.Exists(ctx, key).Val(); n != 0 {
		t.Errorf("the restarted server holds %s; the SET must never have reached it", key)
	}
	for _, r := range p.Log() {
		if r.Command == "SET" && (r.Before != 1 || !r.Forwarded || r.Ran || r.Delivered) {
			t.Errorf("the SET's record: %+v; want the event, then written with no reply", r)
		}
	}
}
