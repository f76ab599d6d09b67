package valkey_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// clusterACL is the minimal ACL plus what a cluster client needs: the slot map (CLUSTER SLOTS)
// and key positions of commands it routes (COMMAND).
const clusterACL = valkeytest.EnsureGroupACL + " +cluster|slots +command"

// TestClient_Cluster runs against one three-master cluster: groups on keys in different
// slots, hash-tagged keys in one slot, a slot migrated between nodes, the minimal ACL, and
// CLUSTERDOWN once a master is gone (last, since it breaks the cluster).
func TestClient_Cluster(t *testing.T) { //nolint:tparallel // the subtests share one cluster in order: CLUSTERDOWN breaks it last
	t.Parallel()
	start := time.Now()
	cluster := valkeytest.StartClusterT(t, 3, 0)
	t.Logf("cluster ready in %v", time.Since(start))
	ctx := context.Background()
	prefix := fmt.Sprintf("ct%d", rand.Uint32())
	// One seed is enough: the client discovers the other nodes. The masters have no replicas to
	// confirm a write (cluster_wait_test.go has them).
	c := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs()[:1], MinReplicaAcks: new(0)})
	if !strings.HasPrefix(c.Addr(), "cluster ") {
		t.Errorf("Addr() = %q", c.Addr())
	}

	// onNode asserts the group is on the node that owns the stream's slot, asked directly.
	onNode := func(t *testing.T, stream, group string) *valkeytest.Server {
		t.Helper()
		owner, err := cluster.Owner(ctx, slotOf(t, cluster, stream))
		if err != nil {
			t.Fatal(err)
		}
		rdb := owner.Client()
		defer rdb.Close()
		groups, err := rdb.XInfoGroups(ctx, stream).Result()
		if err != nil {
			t.Fatalf("XINFO GROUPS %s on owner %s: %v", stream, owner.Addr(), err)
		}
		for _, g := range groups {
			if g.Name == group {
				return owner
			}
		}
		t.Fatalf("group %s not on %s at %s: %+v", group, stream, owner.Addr(), groups)
		return nil
	}

	t.Run("keys in different slots", func(t *testing.T) {
		owners := map[string]bool{}
		for i := range 12 {
			stream := fmt.Sprintf("%s:{s%d}:stream", prefix, i)
			if _, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil {
				t.Fatalf("EnsureGroup %s: %v", stream, err)
			}
			owners[onNode(t, stream, "billing").Addr()] = true
			if _, found, err := c.Group(ctx, stream, "billing"); err != nil || !found {
				t.Fatalf("Group %s: found=%v err=%v", stream, found, err)
			}
		}
		if len(owners) < 2 {
			t.Errorf("12 streams landed on %d node(s); the test did not cross slots", len(owners))
		}
	})

	t.Run("hash tag keeps keys in one slot", func(t *testing.T) {
		main, retry := prefix+":{orders}:stream:main", prefix+":{orders}:stream:retry"
		if slotOf(t, cluster, main) != slotOf(t, cluster, retry) {
			t.Fatal("CLUSTER KEYSLOT differs for keys with one hash tag")
		}
		for _, s := range []string{main, retry} {
			if _, _, err := c.EnsureGroup(ctx, s, "billing", valkey.StartHead); err != nil {
				t.Fatalf("EnsureGroup %s: %v", s, err)
			}
		}
		if onNode(t, main, "billing") != onNode(t, retry, "billing") {
			t.Error("hash-tagged streams live on different nodes")
		}
	})

	t.Run("slot migrated mid-test", func(t *testing.T) {
		stream := prefix + ":{migrating}:stream"
		if _, _, err := c.EnsureGroup(ctx, stream, "before", valkey.StartNew); err != nil {
			t.Fatal(err)
		}
		from := onNode(t, stream, "before")
		var to *valkeytest.Server
		for _, s := range cluster.Nodes {
			if s != from {
				to = s
				break
			}
		}
		if err := cluster.MigrateSlot(ctx, slotOf(t, cluster, stream), to); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		// The client's slot map is stale now: MOVED must be followed, for EnsureGroup and for reads.
		if outcome, _, err := c.EnsureGroup(ctx, stream, "after", valkey.StartNew); err != nil || outcome != valkey.Created {
			t.Fatalf("EnsureGroup after migration: outcome=%v err=%v", outcome, err)
		}
		if outcome, _, err := c.EnsureGroup(ctx, stream, "before", valkey.StartNew); err != nil || outcome != valkey.Adopted {
			t.Fatalf("EnsureGroup of the migrated group: outcome=%v err=%v", outcome, err)
		}
		if got := onNode(t, stream, "after"); got != to {
			t.Errorf("group created on %s, want the slot's new owner %s", got.Addr(), to.Addr())
		}
		onNode(t, stream, "before")
	})

	t.Run("minimal ACL", func(t *testing.T) {
		stream := prefix + ":{acl}:stream"
		user, pw := cluster.ACLUser(t, prefix+":*", clusterACL)
		limited := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs(), Username: user, Password: pw, MinReplicaAcks: new(0)})
		if _, _, err := limited.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil {
			t.Fatalf("EnsureGroup as %s: %v", user, err)
		}
		if _, found, err := limited.Group(ctx, stream, "billing"); err != nil || !found {
			t.Fatalf("Group as %s: found=%v err=%v", user, found, err)
		}
		onNode(t, stream, "billing")
		for _, s := range cluster.Nodes {
			for _, e := range s.ACLDenials(t, user) {
				t.Errorf("ACL LOG on %s records a denial for %s: %+v", s.Addr(), user, *e)
			}
		}
	})

	t.Run("CLUSTERDOWN", func(t *testing.T) {
		dead := cluster.Nodes[2]
		dead.Stop()
		alive := cluster.Nodes[0]
		rdb := alive.Client()
		defer rdb.Close()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(rdb.ClusterInfo(ctx).Val(), "cluster_state:fail") {
			if time.Now().After(deadline) {
				t.Fatal("cluster did not notice the dead master")
			}
			time.Sleep(100 * time.Millisecond)
		}
		// A stream whose slot the live node serves: it answers, and refuses with CLUSTERDOWN.
		var stream string
		for i := 0; ; i++ {
			stream = fmt.Sprintf("%s:{down%d}:stream", prefix, i)
			if owner, _ := cluster.Owner(ctx, slotOf(t, cluster, stream)); owner == alive {
				break
			}
		}
		fresh := newClient(t, valkey.Options{ClusterAddrs: []string{alive.Addr()}, MaxRetries: new(0), MinReplicaAcks: new(0)})
		_, _, err := fresh.EnsureGroup(ctx, stream, "g", valkey.StartNew)
		var refused *valkey.RefusedError
		if !errors.As(err, &refused) || refused.Code() != "CLUSTERDOWN" {
			t.Fatalf("err = %T %v, want a CLUSTERDOWN refusal", err, err)
		}
	})
}

// slotOf asks the cluster which slot key hashes to.
func slotOf(t *testing.T, cluster *valkeytest.Cluster, key string) int {
	t.Helper()
	rdb := cluster.Nodes[0].Client()
	defer rdb.Close()
	slot, err := rdb.ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return int(slot)
}
