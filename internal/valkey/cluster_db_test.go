package valkey_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// needClusterDatabases skips the test on a server without numbered databases in Cluster mode
// (cluster-databases came with Valkey 9.0).
func needClusterDatabases(t *testing.T) {
	t.Helper()
	valkeytest.NeedVersion(t, 9, 0, "databases other than 0 in Cluster mode: cluster-databases")
}

// TestClient_ClusterDatabase: with cluster-databases (Valkey 9), db is the database of every
// node: EnsureGroup, the reads and the listing work in database 3 of the node owning each key,
// and never in database 0, on connections opened after the first ones were killed and on a
// node the client meets only after a reshard.
func TestClient_ClusterDatabase(t *testing.T) { //nolint:tparallel // the subtests share one cluster in order: the reshard comes last
	t.Parallel()
	needClusterDatabases(t)
	cluster := valkeytest.StartClusterT(t, 3, 0, valkeytest.WithArgs("--cluster-databases", "16"))
	ctx := context.Background()
	const db = 3
	prefix := fmt.Sprintf("cdb%d", rand.Uint32())
	c := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs()[:1], DB: new(db), MinReplicaAcks: new(0)})

	// inDatabase asserts that group is on stream in database 3 of the node owning the stream's
	// slot, and that the owner's database 0 has no such stream (no other node may hold it).
	inDatabase := func(t *testing.T, stream, group string) *valkeytest.Server {
		t.Helper()
		owner, err := cluster.Owner(ctx, slotOf(t, cluster, stream))
		if err != nil {
			t.Fatal(err)
		}
		if got := owner.Groups(t, db, stream); !slices.Contains(got, group) {
			t.Errorf("database %d of %s, the owner of %s, has groups %v; want %s", db, owner.Addr(), stream, got, group)
		}
		if got := owner.Groups(t, 0, stream); got != nil {
			t.Errorf("database 0 of %s has stream %s (groups %v)", owner.Addr(), stream, got)
		}
		return owner
	}

	var streams []string
	t.Run("EnsureGroup and reads on every primary", func(t *testing.T) {
		owners := map[*valkeytest.Server]bool{}
		for i := range 9 {
			stream := fmt.Sprintf("%s:{s%d}:stream", prefix, i)
			streams = append(streams, stream)
			if outcome, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartHead); err != nil || outcome != valkey.Created {
				t.Fatalf("EnsureGroup %s: %v, %v", stream, outcome, err)
			}
			owners[inDatabase(t, stream, "billing")] = true
			if _, found, err := c.Group(ctx, stream, "billing"); err != nil || !found {
				t.Errorf("Group %s: found=%v err=%v", stream, found, err)
			}
			if _, err := c.StreamInfo(ctx, stream); err != nil {
				t.Errorf("StreamInfo %s: %v", stream, err)
			}
			if _, _, err := c.GroupDetail(ctx, stream, "billing"); err != nil {
				t.Errorf("GroupDetail %s: %v", stream, err)
			}
		}
		if len(owners) != 3 {
			t.Errorf("9 streams landed on %d of 3 primaries; the test did not cross them", len(owners))
		}
	})

	t.Run("reads never see database 0", func(t *testing.T) {
		decoy := prefix + ":{decoy}:stream"
		all := cluster.Client()
		defer func() { _ = all.Close() }()
		if err := all.XGroupCreateMkStream(ctx, decoy, "decoy", "0").Err(); err != nil {
			t.Fatal(err)
		}
		if s, err := c.Survey(ctx, decoy); err != nil || s.Exists {
			t.Errorf("Survey of a stream only database 0 holds = %+v, %v; want a missing stream", s, err)
		}
		var listed []string
		for g, err := range c.ListGroups(ctx, valkey.ListOptions{Match: prefix + ":*"}) {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, g.Stream)
		}
		slices.Sort(listed)
		if !slices.Equal(listed, streams) {
			t.Errorf("ListGroups by pattern read %v; want the streams of database %d on every primary, %v", listed, db, streams)
		}
	})

	t.Run("connections opened later", func(t *testing.T) {
		selects := map[*valkeytest.Server]int{}
		for _, s := range cluster.Nodes {
			rdb := s.Client()
			selects[s] = valkeytest.CommandCalls(t, rdb, "select")
			// The client's pooled connections are gone; the next command opens new ones.
			if err := rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
				t.Fatal(err)
			}
			_ = rdb.Close()
		}
		stream := prefix + ":{later}:stream"
		if _, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil {
			t.Fatalf("EnsureGroup on a new connection: %v", err)
		}
		owner := inDatabase(t, stream, "billing")
		rdb := owner.Client()
		defer func() { _ = rdb.Close() }()
		if got := valkeytest.CommandCalls(t, rdb, "select"); got <= selects[owner] {
			t.Errorf("the owner ran SELECT %d times before and %d after; the new connection did not select the database", selects[owner], got)
		}
	})

	t.Run("node met after a reshard", func(t *testing.T) {
		stream := streams[0]
		added, err := cluster.AddNode(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := cluster.MigrateSlot(ctx, slotOf(t, cluster, stream), added); err != nil {
			t.Fatalf("migrate to the new node: %v", err)
		}
		// The client's slot map is stale and names no such node: MOVED leads it there.
		if outcome, _, err := c.EnsureGroup(ctx, stream, "audit", valkey.StartNew); err != nil || outcome != valkey.Created {
			t.Fatalf("EnsureGroup after the reshard: %v, %v", outcome, err)
		}
		if owner := inDatabase(t, stream, "audit"); owner != added {
			t.Errorf("group created on %s, want the new node %s", owner.Addr(), added.Addr())
		}
		if outcome, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartHead); err != nil || outcome != valkey.Adopted {
			t.Errorf("EnsureGroup of the group the reshard moved: %v, %v; want it adopted", outcome, err)
		}
	})
}

// TestClient_ClusterDatabaseRefused: a cluster that serves only database 0 (Valkey 8, or 9
// with cluster-databases 1) refuses SELECT while the connection opens. Every entry point
// reports that as such, naming the node, the database and the server's words, and nothing is
// written to any database of any node.
func TestClient_ClusterDatabaseRefused(t *testing.T) {
	t.Parallel()
	cluster := valkeytest.StartClusterT(t, 3, 0)
	ctx := context.Background()
	stream := fmt.Sprintf("cdbr%d:{s}:stream", rand.Uint32())
	c := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs(), DB: new(3), MinReplicaAcks: new(0), MaxRetries: new(0)})

	check := func(what string, err error) {
		t.Helper()
		var unreachable *valkey.UnreachableError
		if !errors.As(err, &unreachable) {
			t.Errorf("%s: err = %T %v; want an UnreachableError", what, err, err)
			return
		}
		if unreachable.Step != "SELECT" || unreachable.DB != 3 || unreachable.Cause() != valkey.CauseNoClusterDatabase ||
			!slices.Contains(cluster.Addrs(), unreachable.Node) {
			t.Errorf("%s: %+v (cause %v); want SELECT 3 refused on a node of the cluster", what, *unreachable, unreachable.Cause())
		}
		if msg := err.Error(); !strings.Contains(msg, "SELECT 3 failed") || !strings.Contains(msg, "ERR ") ||
			!strings.Contains(msg, "node "+unreachable.Node) {
			t.Errorf("%s: %q names neither the node, the database nor the server's words", what, msg)
		}
	}
	_, _, err := c.EnsureGroup(ctx, stream, "g", valkey.StartHead)
	check("EnsureGroup", err)
	_, _, err = c.Group(ctx, stream, "g")
	check("Group", err)
	_, err = c.Survey(ctx, stream)
	check("Survey", err)
	_, err = c.StreamInfo(ctx, stream)
	check("StreamInfo", err)
	err = nil
	for _, listErr := range c.ListGroups(ctx, valkey.ListOptions{Match: "*"}) {
		err = listErr
	}
	check("ListGroups", err)

	for _, s := range cluster.Nodes {
		rdb := s.Client()
		if got := valkeytest.CommandCalls(t, rdb, "xgroup|create"); got != 0 {
			t.Errorf("%s ran XGROUP CREATE %d times", s.Addr(), got)
		}
		dbs, err := valkeytest.Databases(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		for db := range dbs {
			one := s.ClientDB(db)
			if n, err := one.DBSize(ctx).Result(); err != nil || n != 0 {
				t.Errorf("database %d of %s holds %d keys (err %v); want nothing written", db, s.Addr(), n, err)
			}
			_ = one.Close()
		}
		_ = rdb.Close()
	}
}
