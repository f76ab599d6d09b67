package valkey_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestServerlessShape_ReachedByURLAndByCluster: an ElastiCache Serverless cache is a cluster that
// shows its clients one endpoint serving every slot (AWS documents CLUSTER SLOTS, SHARDS and
// NODES as returning "the single virtual shard"). A one-node cluster holding all 16384 slots has
// that shape, and a group is created through it both as a single server (url) and as a cluster
// seeded with it (cluster). Under cluster, min_replica_acks defaults to 1: with no replica to
// acknowledge, WAIT answers 0 and the create is reported unconfirmed, so a cluster without
// replicas needs min_replica_acks = 0.
func TestServerlessShape_ReachedByURLAndByCluster(t *testing.T) {
	t.Parallel()
	node := valkeytest.StartT(t, valkeytest.WithArgs("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"))
	ctx := context.Background()
	admin := node.Client()
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err := admin.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the one-node cluster is not ok after 10 s: %q, %v", info, err)
		}
	}
	stream := key(t, "stream")
	open := func(opts valkey.Options) *valkey.Client {
		c, err := valkey.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	byURL := open(valkey.Options{URL: node.URL()})
	if outcome, _, err := byURL.EnsureGroup(ctx, stream, "by-url", valkey.StartNew); err != nil || outcome != valkey.Created {
		t.Errorf("through url: %v, %v; want Created", outcome, err)
	}
	byCluster := open(valkey.Options{ClusterAddrs: []string{node.Addr()}, MinReplicaAcks: new(0)})
	if outcome, _, err := byCluster.EnsureGroup(ctx, stream, "by-cluster", valkey.StartNew); err != nil || outcome != valkey.Created {
		t.Errorf("through cluster with min_replica_acks 0: %v, %v; want Created", outcome, err)
	}
	if groups := node.Groups(t, 0, stream); len(groups) != 2 {
		t.Errorf("the server holds groups %v, want by-url and by-cluster", groups)
	}

	byDefault := open(valkey.Options{ClusterAddrs: []string{node.Addr()}})
	_, _, err := byDefault.EnsureGroup(ctx, stream, "by-default", valkey.StartNew)
	var unconfirmed *valkey.UnconfirmedError
	if !errors.As(err, &unconfirmed) || unconfirmed.Acked != 0 || unconfirmed.Wanted != 1 {
		t.Errorf("through cluster with the default min_replica_acks: %v; want unconfirmed, 0 of 1 replica", err)
	}
}
