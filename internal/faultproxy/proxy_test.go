package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
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
	srv := valkeytest.StartT(t)
	p := StartProxyT(t, srv.Addr())
	rdb := proxiedClient(t, p)
	ctx := context.Background()
	key := valkeytest.Key(t, "{%s}:s")
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
	srv := valkeytest.StartT(t)
	p := StartProxyT(t, srv.Addr(), Fault{Command: "SET", Action: DropReply, Times: 1})
	rdb, admin := proxiedClient(t, p), srv.Client()
	defer admin.Close()
	ctx := context.Background()
	key := valkeytest.Key(t, "{%s}:k")
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
	srv := valkeytest.StartT(t)
	p := StartProxyT(t, srv.Addr(), Fault{Command: "GET", Action: CutReply})
	ctx := context.Background()
	key := valkeytest.Key(t, "{%s}:k")
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
	srv := valkeytest.StartT(t)
	p := StartProxyT(t, srv.Addr(), Fault{Command: "GET", Action: Answer, Reply: "LOADING Valkey is loading the dataset in memory"})
	rdb := proxiedClient(t, p)
	ctx := context.Background()
	key := valkeytest.Key(t, "{%s}:k")
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
	srv := valkeytest.StartT(t)
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

func TestProxy_KeyAndAfterPickOneCommandOfAPipeline(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	a, b := valkeytest.Key(t, "{%s}:a"), valkeytest.Key(t, "{%s}:b")
	// The second GET of key b, and only that one: not the GETs of a, not the first GET of b.
	p := StartProxyT(t, srv.Addr(), Fault{Command: "GET", Key: b, After: 1, Times: 1, Action: Answer, Reply: "ERR injected"})
	rdb := proxiedClient(t, p)
	ctx := context.Background()
	var gets []*redis.StringCmd
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, a, "1", 0)
		pipe.Set(ctx, b, "2", 0)
		for _, k := range []string{a, b, a, b, b} {
			gets = append(gets, pipe.Get(ctx, k))
		}
		return nil
	})
	for i, get := range gets {
		wantErr := i == 3
		if err := get.Err(); (err != nil) != wantErr || (wantErr && err.Error() != "ERR injected") {
			t.Errorf("GET %d: %q, %v; want the injected error only on the second GET of %s", i, get.Val(), err, b)
		}
	}
}

func TestProxy_LogSaysWhatBecameOfEachCommand(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	key := valkeytest.Key(t, "{%s}:s")
	p := StartProxyT(t, srv.Addr(), Fault{Command: "XINFO GROUPS", Action: DropReply, Times: 1})
	p.KeepLog()
	rdb := proxiedClient(t, p)
	ctx := context.Background()
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.XGroupCreateMkStream(ctx, key, "g", "$")
		pipe.Do(ctx, "XINFO", "GROUPS", key)
		pipe.Do(ctx, "XINFO", "STREAM", key)
		return nil
	})
	var log []Record
	for _, r := range p.Log() {
		if r.Command != "HELLO" { // the connection's handshake
			log = append(log, r)
		}
	}
	if len(log) != 3 {
		t.Fatalf("log %+v, want the three commands", log)
	}
	create, groups, stream := log[0], log[1], log[2]
	if create.Command != "XGROUP CREATE" || create.Key != key || !slicesEqual(create.Args, []string{key, "g", "$", "mkstream"}) ||
		!create.Forwarded || !create.Ran || !create.Delivered || create.Reply != "+OK" || create.Action != 0 {
		t.Errorf("the create: %+v; want it forwarded, run, answered +OK and delivered", create)
	}
	if groups.Action != DropReply || !groups.Ran || groups.Delivered {
		t.Errorf("the dropped XINFO GROUPS: %+v; want it run, its reply not delivered", groups)
	}
	if stream.Delivered {
		t.Errorf("the XINFO STREAM after the cut: %+v; want its reply never delivered", stream)
	}
	if len(p.Log()) != 0 {
		t.Error("Log must forget what it returned")
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func TestProxy_RefuseResetsAConnectionThenRefusesDials(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	// Two seconds without a listener: a window that a loaded machine does not miss.
	p := StartProxyT(t, srv.Addr(), Fault{Action: Refuse, Times: 1, Delay: 2 * time.Second})
	ctx := context.Background()
	first := proxiedClient(t, p)
	if err := first.Ping(ctx).Err(); err == nil {
		t.Fatal("PING on the refused connection succeeded")
	}
	// Then the proxy stops listening, and a dial is refused outright. The reset reaches the
	// client just before the listener closes, so a dial in between may still connect: it is
	// closed and the dial tried again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", p.Addr(), time.Second)
		if err != nil {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("dial while refusing: %v, want ECONNREFUSED", err)
			}
			break
		}
		_ = conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("every dial after the refused connection succeeded: the proxy never stopped listening")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		if err := proxiedClient(t, p).Ping(ctx).Err(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the proxy did not listen again after the Refuse delay: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p.Hits() != 1 {
		t.Errorf("hits %d, want the one refused connection", p.Hits())
	}
}

// TestProxiedCluster_ClientsReachNodesOnlyThroughTheProxies: a cluster client given the proxies
// learns only proxy addresses (CLUSTER SLOTS, MOVED), so every command of keys on every node is
// in the proxies' logs, and a fault injected there reaches it.
func TestProxiedCluster_ClientsReachNodesOnlyThroughTheProxies(t *testing.T) {
	t.Parallel()
	pc := StartProxiedClusterT(t, 3)
	for _, p := range pc.Proxies {
		p.KeepLog()
	}
	ctx := context.Background()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: pc.ProxyAddrs()[:1], Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer rdb.Close()
	keys := []string{"{a}:k", "{b}:k", "{c}:k"} // slots 15495, 3300, 7365: one on each master
	for _, k := range keys {
		if err := rdb.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatalf("SET %s through the proxies: %v", k, err)
		}
	}
	_ = rdb.Close()
	seen := map[string]int{}
	for i, p := range pc.Proxies {
		for _, r := range p.Log() {
			if r.Command == "SET" {
				seen[r.Key]++
				owner, err := pc.NodeOf(ctx, int(pc.Nodes[i].KeySlots(t, []string{r.Key})[0]))
				if err != nil || owner != pc.Nodes[i] {
					t.Errorf("SET %s went through the proxy of %s, which does not own its slot (owner %v, %v)", r.Key, pc.Nodes[i].Addr(), owner, err)
				}
			}
		}
	}
	for _, k := range keys {
		if seen[k] != 1 {
			t.Errorf("SET %s passed the proxies %d times, want once", k, seen[k])
		}
	}
	// A fault in the proxies reaches the cluster client.
	for _, p := range pc.Proxies {
		p.Inject(Fault{Command: "GET", Action: Answer, Reply: "ERR injected"})
	}
	faulted := redis.NewClusterClient(&redis.ClusterOptions{Addrs: pc.ProxyAddrs()[1:2], Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer faulted.Close()
	if err := faulted.Get(ctx, keys[0]).Err(); err == nil || err.Error() != "ERR injected" {
		t.Errorf("GET through the faulted proxies: %v, want the injected error", err)
	}
}

// TestProxy_GroupFaultActsOnThatGroupsCreateOnly: a fault that names a key and a group acts
// on that group's XGROUP CREATE, whichever creates come before it, and the log gives the
// delay it held the reply back.
func TestProxy_GroupFaultActsOnThatGroupsCreateOnly(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	key := valkeytest.Key(t, "{%s}:s")
	const delay = 200 * time.Millisecond
	p := StartProxyT(t, srv.Addr(), Fault{Command: "XGROUP CREATE", Key: key, Group: "b", Action: DelayReply, Delay: delay, Times: 1})
	p.KeepLog()
	rdb := proxiedClient(t, p)
	ctx := context.Background()
	took := map[string]time.Duration{}
	for _, g := range []string{"a", "c", "b", "d"} {
		started := time.Now()
		if err := rdb.XGroupCreateMkStream(ctx, key, g, "$").Err(); err != nil {
			t.Fatal(err)
		}
		took[g] = time.Since(started)
	}
	for g, d := range took {
		if (d >= delay) != (g == "b") {
			t.Errorf("the create of group %s took %v; want only b's held back %v", g, d, delay)
		}
	}
	for _, r := range p.Log() {
		if r.Command != "XGROUP CREATE" {
			continue
		}
		if hit := r.Args[1] == "b"; hit != (r.Action == DelayReply) || hit != (r.Delay == delay) {
			t.Errorf("log of the create of %s: action %v, delay %v; want DelayReply and %v only for b", r.Args[1], r.Action, r.Delay, delay)
		}
	}
}

// TestProxy_DropFieldsTakesFieldsOutOfXINFOReplies: the XINFO GROUPS reply reaches the client
// without entries-read and lag, in RESP2 (flat name/value arrays) and RESP3 (maps), with every
// other field and group as the server gave them; other commands' replies are untouched.
func TestProxy_DropFieldsTakesFieldsOutOfXINFOReplies(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	p := StartProxyT(t, srv.Addr(), Fault{Command: "XINFO GROUPS", Action: DropFields, Fields: []string{"entries-read", "lag"}})
	ctx, key := context.Background(), valkeytest.Key(t, "{%s}:s")
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	valkeytest.XAdd(t, admin, key, "1-1", "2-1")
	for _, group := range []string{"a", "b"} {
		if err := admin.XGroupCreate(ctx, key, group, "0").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, protocol := range []int{2, 3} {
		rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), Protocol: protocol, DisableIdentity: true, MaxRetries: -1})
		t.Cleanup(func() { _ = rdb.Close() })
		raw, err := rdb.Do(ctx, "XINFO", "GROUPS", key).Result()
		if err != nil {
			t.Fatalf("RESP%d: %v", protocol, err)
		}
		groups, ok := raw.([]any)
		if !ok || len(groups) != 2 {
			t.Fatalf("RESP%d: XINFO GROUPS through the proxy = %#v, want two groups", protocol, raw)
		}
		for _, g := range groups {
			fields := map[string]any{}
			switch g := g.(type) {
			case []any:
				for i := 0; i+1 < len(g); i += 2 {
					name, _ := g[i].(string)
					fields[name] = g[i+1]
				}
			case map[any]any:
				for name, v := range g {
					if name, ok := name.(string); ok {
						fields[name] = v
					}
				}
			}
			for _, dropped := range []string{"entries-read", "lag"} {
				if _, present := fields[dropped]; present {
					t.Errorf("RESP%d: %s reached the client: %v", protocol, dropped, fields)
				}
			}
			for _, kept := range []string{"name", "consumers", "pending", "last-delivered-id"} {
				if _, present := fields[kept]; !present {
					t.Errorf("RESP%d: %s was lost: %v", protocol, kept, fields)
				}
			}
		}
		if n, err := rdb.XLen(ctx, key).Result(); err != nil || n != 2 {
			t.Errorf("RESP%d: XLEN through the proxy = %d, %v; want 2", protocol, n, err)
		}
	}
}
