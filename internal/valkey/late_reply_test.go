package valkey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestEnsureGroup_LateReplyIsAnUnknownOutcome: the server runs XGROUP CREATE, and its reply
// comes back only long after the client's command timeout (the proxy holds it back for ten
// times as long). The client gave up waiting on a command it had written, so it cannot know
// what the server did: that is a lost reply, an *UnknownOutcomeError, never a known failure
// (an unreachable server or a refusal, which say "not created") and never an adoption. The
// create is not sent again, the error says what the server shows now (the group, made by this
// very create), and the next call adopts it. Standalone, and in Cluster mode, where the create
// travels through the proxy of the node that owns the key.
func TestEnsureGroup_LateReplyIsAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	late := faultproxy.Fault{Command: "XGROUP CREATE", Action: faultproxy.DelayReply, Delay: 10 * timeout, Times: 1}
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		srv := valkeytest.StartT(t)
		admin := srv.Client()
		defer func() { _ = admin.Close() }()
		proxy := faultproxy.StartProxyT(t, srv.Addr(), late)
		c := newClient(t, valkey.Options{URL: proxy.URL(), CommandTimeout: timeout, MaxRetries: new(3)})
		expectLateReplyUnknown(t, c, key(t, "stream"), proxy.Addr(), []*redis.Client{admin})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		pc := faultproxy.StartProxiedClusterT(t, 3)
		for _, p := range pc.Proxies {
			p.Inject(late) // each proxy counts its own matches: only the key's owner sees the create
		}
		var admins []*redis.Client
		for _, n := range pc.Nodes {
			rdb := n.Client()
			defer func() { _ = rdb.Close() }()
			admins = append(admins, rdb)
		}
		c := newClient(t, valkey.Options{ClusterAddrs: pc.ProxyAddrs(), CommandTimeout: timeout, DialTimeout: time.Second,
			MaxRetries: new(3), MinReplicaAcks: new(0)}) // no replicas: no WAIT
		expectLateReplyUnknown(t, c, "{a}:"+key(t, "stream"), c.Addr(), admins)
	})
}

// expectLateReplyUnknown runs EnsureGroup against a create whose reply comes late, and checks
// that it is reported as a lost reply, run once, and adopted by the next call.
func expectLateReplyUnknown(t *testing.T, c *valkey.Client, stream, addr string, admins []*redis.Client) {
	t.Helper()
	ctx := context.Background()
	started := time.Now()
	outcome, _, err := c.EnsureGroup(ctx, stream, "late", valkey.StartHead)
	took := time.Since(started)
	var (
		unknown     *valkey.UnknownOutcomeError
		unreachable *valkey.UnreachableError
		refused     *valkey.RefusedError
	)
	switch {
	case errors.As(err, &unreachable) || errors.As(err, &refused):
		t.Fatalf("EnsureGroup with the create's reply late = %T %v: a known failure, but the create was written and may have run", err, err)
	case !errors.As(err, &unknown) || outcome != 0:
		t.Fatalf("EnsureGroup with the create's reply late = %v, %T %v; want no outcome and an UnknownOutcomeError", outcome, err, err)
	}
	if unknown.Cause() != valkey.CauseTimeout {
		t.Errorf("the reply was lost for cause %d (%v); it was held back past command_timeout, a timeout", unknown.Cause(), err)
	}
	if unknown.Addr != addr || unknown.Stream != stream || unknown.Group != "late" {
		t.Errorf("the unknown outcome names %s, %q, %q; want %s, %q, \"late\"", unknown.Addr, unknown.Stream, unknown.Group, addr, stream)
	}
	t.Logf("EnsureGroup gave up after %v: %v", took.Round(time.Millisecond), err)
	// The server ran the create (the proxy only held its reply back), once.
	calls := 0
	for _, rdb := range admins {
		calls += valkeytest.CommandCalls(t, rdb, "xgroup|create")
	}
	if calls != 1 {
		t.Errorf("XGROUP CREATE ran %d times; a create that may have run is never sent again", calls)
	}
	if !unknown.Now.GroupExists || unknown.Now.Group.LastDeliveredID != "0-0" || unknown.NowErr != nil {
		t.Errorf("what the server shows now = %+v (err %v); want the group, at the head", unknown.Now, unknown.NowErr)
	}
	if outcome, g, err := c.EnsureGroup(ctx, stream, "late", valkey.StartHead); err != nil || outcome != valkey.Adopted || g.LastDeliveredID != "0-0" {
		t.Errorf("second EnsureGroup = %v, %+v, %v; want the group the late create made, adopted at 0-0", outcome, g, err)
	}
}
