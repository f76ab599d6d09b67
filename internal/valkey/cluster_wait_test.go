package valkey_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// waitCalls is how many times each node ran WAIT since it started.
func waitCalls(t *testing.T, cluster *valkeytest.Cluster) map[*valkeytest.Server]int {
	t.Helper()
	calls := map[*valkeytest.Server]int{}
	for _, s := range cluster.Nodes {
		rdb := s.Client()
		calls[s] = valkeytest.CommandCalls(t, rdb, "wait")
		_ = rdb.Close()
	}
	return calls
}

// onReplica reads stream's groups on replica, which serves its primary's slots after READONLY.
func onReplica(t *testing.T, replica *valkeytest.Server, stream string) []string {
	t.Helper()
	ctx := context.Background()
	rdb := replica.Client()
	defer func() { _ = rdb.Close() }()
	conn := rdb.Conn()
	defer func() { _ = conn.Close() }()
	if err := conn.ReadOnly(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	groups, err := conn.XInfoGroups(ctx, stream).Result()
	if err != nil {
		t.Fatalf("XINFO GROUPS %s on replica %s: %v", stream, replica.Addr(), err)
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	return names
}

// TestEnsureGroup_ClusterWaitsOnThePrimaryThatRanTheCreate: with min_replica_acks in a cluster
// (one replica by default), WAIT runs right after XGROUP CREATE on the primary that owns the
// slot, and counts that primary's replicas. When the create is redirected (MOVED after a
// reshard, ASK while the slot migrates), the WAIT that counts is the one on the node that ran
// the create: a replica down there fails EnsureGroup, however healthy the redirecting node's is.
func TestEnsureGroup_ClusterWaitsOnThePrimaryThatRanTheCreate(t *testing.T) { //nolint:tparallel // the subtests share one cluster in order: a replica dies for the last two
	t.Parallel()
	cluster := valkeytest.StartClusterT(t, 3, 1)
	ctx := context.Background()
	prefix := fmt.Sprintf("cw%d", rand.Uint32())
	const ackTimeout = 300 * time.Millisecond
	c := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs()[:1], ReplicaAckTimeout: ackTimeout})
	if acks, _ := valkey.ReplicaAcks(c); acks != valkey.DefaultFailoverReplicaAcks {
		t.Fatalf("a cluster client waits for %d replicas; want the default, %d", acks, valkey.DefaultFailoverReplicaAcks)
	}
	owner := func(t *testing.T, stream string) (*valkeytest.Server, *valkeytest.Server) {
		t.Helper()
		slot := slotOf(t, cluster, stream)
		primary, err := cluster.Owner(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		replicas, err := cluster.Replicas(ctx, slot)
		if err != nil || len(replicas) != 1 {
			t.Fatalf("replicas of slot %d: %v, %v", slot, replicas, err)
		}
		return primary, replicas[0]
	}
	// streamOn finds a stream key whose slot node serves.
	streamOn := func(t *testing.T, node *valkeytest.Server, tag string) string {
		t.Helper()
		for i := 0; ; i++ {
			stream := fmt.Sprintf("%s:{%s%d}:stream", prefix, tag, i)
			if primary, _ := owner(t, stream); primary == node {
				return stream
			}
		}
	}
	// unconfirmedOn asserts an EnsureGroup refused for want of a replica of node.
	unconfirmedOn := func(t *testing.T, err error, node *valkeytest.Server, acked int64) {
		t.Helper()
		var unconfirmed *valkey.UnconfirmedError
		if !errors.As(err, &unconfirmed) || unconfirmed.Node != node.Addr() || unconfirmed.Acked != acked || unconfirmed.Outcome != valkey.Created {
			t.Fatalf("err = %v; want a created group that %d replicas of %s confirmed", err, acked, node.Addr())
		}
	}
	primaries := map[*valkeytest.Server]bool{}
	for i := range 30 {
		p, _ := owner(t, fmt.Sprintf("%s:{p%d}:stream", prefix, i))
		primaries[p] = true
	}
	var a, b, third *valkeytest.Server
	for _, s := range cluster.Nodes {
		if !primaries[s] {
			continue
		}
		switch {
		case a == nil:
			a = s
		case b == nil:
			b = s
		default:
			third = s
		}
	}

	t.Run("confirmed by the owner's replica", func(t *testing.T) {
		for i := range 6 {
			stream := fmt.Sprintf("%s:{s%d}:stream", prefix, i)
			primary, replica := owner(t, stream)
			before := waitCalls(t, cluster)
			if outcome, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil || outcome != valkey.Created {
				t.Fatalf("EnsureGroup %s: %v, %v", stream, outcome, err)
			}
			for s, n := range waitCalls(t, cluster) {
				if want := before[s] + map[bool]int{true: 1}[s == primary]; n != want {
					t.Errorf("%s ran WAIT %d times for the create on %s (owner %s); want %d", s.Addr(), n-before[s], stream, primary.Addr(), want-before[s])
				}
			}
			if got := onReplica(t, replica, stream); !slices.Contains(got, "billing") {
				t.Errorf("the owner's replica %s has groups %v on %s right after EnsureGroup", replica.Addr(), got, stream)
			}
		}
	})

	t.Run("short count", func(t *testing.T) {
		stream := streamOn(t, a, "short")
		two := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs(), MinReplicaAcks: new(2), ReplicaAckTimeout: ackTimeout})
		_, _, err := two.EnsureGroup(ctx, stream, "billing", valkey.StartNew)
		var unconfirmed *valkey.UnconfirmedError
		if !errors.As(err, &unconfirmed) || unconfirmed.Node != a.Addr() || unconfirmed.Acked != 1 || unconfirmed.Wanted != 2 {
			t.Fatalf("err = %v; want 1 of 2 replicas of %s", err, a.Addr())
		}
	})

	t.Run("MOVED: confirmed by the new owner's replica", func(t *testing.T) {
		stream := streamOn(t, a, "moved")
		if _, _, err := c.EnsureGroup(ctx, stream, "before", valkey.StartNew); err != nil {
			t.Fatal(err)
		}
		if err := cluster.MigrateSlot(ctx, slotOf(t, cluster, stream), b); err != nil {
			t.Fatal(err)
		}
		before := waitCalls(t, cluster)
		if outcome, _, err := c.EnsureGroup(ctx, stream, "after", valkey.StartNew); err != nil || outcome != valkey.Created {
			t.Fatalf("EnsureGroup after the reshard: %v, %v", outcome, err)
		}
		if after := waitCalls(t, cluster); after[b] != before[b]+1 {
			t.Errorf("the new owner ran WAIT %d times for the redirected create; want 1", after[b]-before[b])
		}
		if _, replica := owner(t, stream); !slices.Contains(onReplica(t, replica, stream), "after") {
			t.Errorf("the new owner's replica %s lacks the group", replica.Addr())
		}
	})

	// The third primary loses its replica: WAIT there counts none, within ackTimeout.
	_, dead := owner(t, streamOn(t, third, "dead"))
	dead.Stop()

	t.Run("MOVED to a primary whose replica is down", func(t *testing.T) {
		stream := streamOn(t, a, "moveddead")
		if _, _, err := c.EnsureGroup(ctx, stream, "before", valkey.StartNew); err != nil {
			t.Fatal(err)
		}
		if err := cluster.MigrateSlot(ctx, slotOf(t, cluster, stream), third); err != nil {
			t.Fatal(err)
		}
		_, _, err := c.EnsureGroup(ctx, stream, "after", valkey.StartNew)
		unconfirmedOn(t, err, third, 0)
	})

	t.Run("ASK to a primary whose replica is down", func(t *testing.T) {
		stream := streamOn(t, b, "askdead") // not created yet: the source answers ASK
		m, err := cluster.BeginMigration(ctx, slotOf(t, cluster, stream), third)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c.EnsureGroup(ctx, stream, "billing", valkey.StartNew)
		unconfirmedOn(t, err, third, 0)
		if err := m.Finish(ctx); err != nil {
			t.Fatal(err)
		}
		rdb := third.Client()
		defer func() { _ = rdb.Close() }()
		if groups := serverGroups(t, rdb, stream); len(groups) != 1 || groups[0].Name != "billing" {
			t.Errorf("the target %s holds %v; want the group the ASK led the create to", third.Addr(), groups)
		}
	})
}
