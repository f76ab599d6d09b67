package valkeytest

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The proxy's faults are what the reliability tests stand on, so each is checked against a
// real server: that it acts on the command it names (inside a pipeline too), and only there.

func proxiedClient(t *testing.T, p *Proxy) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func TestProxy_RelaysPipelinesInOrderAndCountsRoundTrips(t *testing.T) {
	t.Parallel()
	srv := StartT(t)
	p := StartProxyT(t, srv.Addr())
	rdb := proxiedClient(t, p)
	ctx := context.Background()
	key := Key(t, "{%s}:s")
	cmds, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, key, "v", 0)
		pipe.Get(ctx, key)
		pipe.Do(ctx, "XINFO", "GROUPS", key)
		return nil
	})
	var rerr redis.Error
	if !errors.As(err, &rerr) || !strings.HasPrefix(rerr.Error(), "WRONGTYPE") {
		t.Fatalf("pipeline error = %v, want the XINFO GROUPS WRONGTYPE reply", err)
	}
	if get, ok := cmds[1].(*redis.StringCmd); !ok || get.Val() != "v" {
		t.Errorf("GET through the proxy = %v, want v", cmds[1])
	}
	_ = rdb.Close()
	trips, conns := p.Take()
	if trips["SET + GET + XINFO GROUPS"] != 1 || conns != 1 {
		t.Errorf("round trips %v over %d connections; want the pipeline as one round trip on one connection", trips, conns)
	}
}

func TestProxy_DropReplyRunsTheCommandAndLosesItsReply(t *testing.T) {
	t.Parallel()
	srv := StartT(t)
	p := StartProxyT(t, srv.Addr(), Fault{Command: "SET", Action: DropReply, Times: 1})
	rdb, admin := proxiedClient(t, p), srv.Client()
	defer admin.Close()
	ctx := context.Background()
	key := Key(t, "{%s}:k")
	err := rdb.Set(ctx, key, "v", 0).Err()
	if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("SET with its reply dropped: err = %v, want the connection cut", err)
	}
	if got := admin.Get(ctx, key).Val(); got != "v" {
		t.Errorf("the server holds %q; the dropped reply's command must have run", got)
	}
	if err := rdb.Set(ctx, key, "w", 0).Err(); err != nil || p.Hits() != 1 {
		t.Errorf("second SET: %v (hits %d); Times: 1 faults one command only", err, p.Hits())
	}
}

func TestProxy_CutReplyPassesHalfAReply(t *testing.T) {
	t.Parallel()
	srv := StartT(t)
	p := StartProxyT(t, srv.Addr(), Fault{Command: "GET", Action: CutReply})
	ctx := context.Background()
	key := Key(t, "{%s}:k")
	admin := srv.Client()
	defer admin.Close()
	if err := admin.Set(ctx, key, strings.Repeat("x", 100), 0).Err(); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("*2\r\n$3\r\nGET\r\n$" + strconv.Itoa(len(key)) + "\r\n" + key + "\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(bufio.NewReader(conn))
	full := "$100\r\n" + strings.Repeat("x", 100) + "\r\n"
	if len(got) != len(full)/2 || !strings.HasPrefix(full, string(got)) {
		t.Errorf("read %d bytes %q (err %v); want the first half of the %d-byte reply, then the cut", len(got), got, err, len(full))
	}
}

func TestProxy_AnswerReplacesOneReplyInAPipeline(t *testing.T) {
	t.Parallel()
	srv := StartT(t)
	p := StartProxyT(t, srv.Addr(), Fault{Command: "GET", Action: Answer, Reply: "LOADING Valkey is loading the dataset in memory"})
	rdb := proxiedClient(t, p)
	ctx := context.Background()
	key := Key(t, "{%s}:k")
	var set *redis.StatusCmd
	var get *redis.StringCmd
	var incr *redis.IntCmd
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		set = pipe.Set(ctx, key, "1", 0)
		get = pipe.Get(ctx, key)
		incr = pipe.Incr(ctx, key)
		return nil
	})
	if set.Err() != nil || incr.Val() != 2 {
		t.Errorf("SET %v, INCR %d %v: the commands around the answered one must run", set.Err(), incr.Val(), incr.Err())
	}
	if err := get.Err(); err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
		t.Errorf("GET = %q, %v; want the injected LOADING reply", get.Val(), err)
	}
}

func TestProxy_DelayAndHang(t *testing.T) {
	t.Parallel()
	srv := StartT(t)
	ctx := context.Background()
	delayed := StartProxyT(t, srv.Addr(), Fault{Command: "PING", Action: DelayReply, Delay: 300 * time.Millisecond})
	start := time.Now()
	if err := proxiedClient(t, delayed).Ping(ctx).Err(); err != nil || time.Since(start) < 300*time.Millisecond {
		t.Errorf("delayed PING: %v after %v; want PONG after at least 300ms", err, time.Since(start))
	}
	hung := StartProxyT(t, srv.Addr(), Fault{Action: Hang})
	rdb := redis.NewClient(&redis.Options{Addr: hung.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: 300 * time.Millisecond})
	defer rdb.Close()
	var netErr net.Error
	if err := rdb.Ping(ctx).Err(); !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Errorf("PING to a proxy that never answers: %v, want a timeout", err)
	}
}
