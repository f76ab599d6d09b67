package systemtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// Groups declared while their slot moves. During a migration the source serves the keys it
// still holds and answers ASK for the others (already moved, or not created yet), which the
// target serves only after ASKING; every plan-time read, XGROUP CREATE, refresh and query must follow
// that, and each group must end on the node that owns its key, in the configured database.

// expectGroupsOn fails unless node holds exactly the groups want on each stream, in database db.
func expectGroupsOn(t *testing.T, node *valkeytest.Server, db int, want map[string][]string) {
	t.Helper()
	for stream, groups := range want {
		got := node.Groups(t, db, stream)
		slices.Sort(got)
		if !slices.Equal(got, groups) {
			t.Errorf("database %d of %s holds %v on %s; want %v", db, node.Addr(), got, stream, groups)
		}
	}
}

// otherPrimary is a primary of cluster that is not node.
func otherPrimary(t *testing.T, cluster *valkeytest.Cluster, node *valkeytest.Server) *valkeytest.Server {
	t.Helper()
	for _, s := range cluster.Nodes {
		if s != node {
			return s
		}
	}
	t.Fatal("a cluster of one node")
	return nil
}

// TestCLICluster_groupsDeclaredWhileTheirSlotMigrates: one slot MIGRATING from A to B holds a
// stream already moved to B, a stream still on A, and a stream that exists nowhere yet. Plan,
// apply, refresh, drift and query work while the migration is in progress, and again once it
// has completed; no check is skipped, and every group is on the node owning its key, in the
// configured database (3 on Valkey 9, with cluster-databases; 0 before).
func TestCLICluster_groupsDeclaredWhileTheirSlotMigrates(t *testing.T) {
	t.Parallel()
	needCLI(t)
	db, opts := clusterDatabase(t)
	cluster := valkeytest.StartClusterT(t, 3, 0, opts...)
	ctx := context.Background()
	tag := valkeytest.Key(t, "emq:{%s}") // one hash tag: the three streams share one slot
	moved, staying, nowhere := tag+":moved", tag+":staying", tag+":nowhere"
	slot := valkey.HashSlot(tag)
	source := ownerOf(t, cluster, tag)
	target := otherPrimary(t, cluster, source)
	seed := source.ClientDB(db)
	t.Cleanup(func() { _ = seed.Close() })
	valkeytest.XAdd(t, seed, moved, "1-1", "2-1", "3-1")
	valkeytest.XAdd(t, seed, staying, "1-1", "2-1", "3-1", "4-1")

	config := clusterProvider(cluster, fmt.Sprintf("db = %d", db), "min_replica_acks = 0")
	for i, stream := range []string{moved, staying, nowhere} {
		config += acctest.NamedGroupConfig(fmt.Sprintf("g%d", i), stream, "billing", "head")
	}
	r := newCLIRun(t, config)
	query := atLeast(t, "1.14.0")
	if query {
		r.put("groups.tfquery.hcl", queryConfig("all", fmt.Sprintf("match = %q", tag+":*")))
	}
	expectQuery := func(want ...string) {
		t.Helper()
		if !query {
			return
		}
		res := r.query().must(t, true)
		noCheckSkipped(t, res)
		if got := foundBy(res).groups["list.valkey_stream_group.all"]; !slices.Equal(got, want) {
			t.Errorf("terraform query found %q; want %q", got, want)
		}
	}

	migration, err := cluster.BeginMigration(ctx, slot, target)
	acctest.MustDo(t, err)
	acctest.MustDo(t, migration.Move(ctx, db, moved))
	if source.Groups(t, db, staying) == nil || target.Groups(t, db, moved) == nil {
		t.Fatal("the migration did not leave one stream on each side")
	}

	plan := r.plan().must(t, true)
	noCheckSkipped(t, plan)
	diagtest.ExpectWarning(t, plan.diags, planwords.GroupSummary(moved, "billing", planwords.WillReplay, planwords.EntriesFigure(3)), 1) // read on B, after ASK
	diagtest.ExpectWarning(t, plan.diags, planwords.GroupSummary(staying, "billing", planwords.WillReplay, planwords.EntriesFigure(4)), 1)
	diagtest.ExpectWarning(t, plan.diags, planwords.StreamWillBeCreated(nowhere), 1)

	noCheckSkipped(t, r.apply().must(t, true))
	// A held staying and runs its XGROUP CREATE; B holds moved and gets the stream that was nowhere (A
	// answers ASK for a key it does not hold).
	expectGroupsOn(t, source, db, map[string][]string{staying: {"billing"}})
	expectGroupsOn(t, target, db, map[string][]string{moved: {"billing"}, nowhere: {"billing"}})
	noCheckSkipped(t, r.expectEmptyPlan()) // refresh reads all three, across the migration

	// Drift on the target, seen through ASK and repaired there.
	asking := target.ClientDB(db).Conn()
	t.Cleanup(func() { _ = asking.Close() })
	_, err = asking.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "ASKING")
		p.XGroupDestroy(ctx, moved, "billing")
		return nil
	})
	acctest.MustDo(t, err)
	if res := r.plan().must(t, true); !res.changes || res.summary == nil || res.summary.Add != 1 {
		t.Fatalf("plan after the group on the moved stream was destroyed: %+v\n%s", res.summary, res.output())
	}
	noCheckSkipped(t, r.apply().must(t, true))
	expectGroupsOn(t, target, db, map[string][]string{moved: {"billing"}})
	all := []string{moved + " billing", nowhere + " billing", staying + " billing"}
	expectQuery(all...)

	// The migration completes: B owns everything, and nothing has to change.
	acctest.MustDo(t, migration.Finish(ctx))
	if owner := ownerOf(t, cluster, tag); owner != target {
		t.Fatalf("slot %d is served by %s after the migration; want %s", slot, owner.Addr(), target.Addr())
	}
	expectGroupsOn(t, target, db, map[string][]string{moved: {"billing"}, staying: {"billing"}, nowhere: {"billing"}})
	noCheckSkipped(t, r.expectEmptyPlan())
	expectQuery(all...)
}

// TestCLICluster_applyDuringAtomicSlotMigration: on Valkey 9, an apply runs while
// CLUSTER MIGRATESLOTS moves the slot of its streams (one with entries, one not created yet).
// The source keeps serving the slot until the handover and forwards what it took meanwhile, so
// the groups end on the target, in the configured database, with no check skipped.
func TestCLICluster_applyDuringAtomicSlotMigration(t *testing.T) {
	t.Parallel()
	needCLI(t)
	db, opts := clusterDatabase(t)
	if db == 0 {
		t.Skip("CLUSTER MIGRATESLOTS came with Valkey 9.0")
	}
	cluster := valkeytest.StartClusterT(t, 3, 0, opts...)
	ctx := context.Background()
	tag := valkeytest.Key(t, "emq:{%s}")
	existing, fresh := tag+":existing", tag+":fresh"
	source := ownerOf(t, cluster, tag)
	target := otherPrimary(t, cluster, source)
	seed := source.ClientDB(db)
	t.Cleanup(func() { _ = seed.Close() })
	valkeytest.XAdd(t, seed, existing, "1-1", "2-1")
	// The source snapshots the slot for the target key by key; with 1,500 keys in the slot and
	// 10 ms a key (rdb-key-save-delay, Valkey's own knob for tests) the snapshot takes 15 s.
	_, err := seed.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 1500 {
			p.Set(ctx, fmt.Sprintf("%s:filler:%d", tag, i), "x", 0)
		}
		return nil
	})
	acctest.MustDo(t, err)
	admin := acctest.Admin(t, source)
	acctest.MustDo(t, admin.ConfigSet(ctx, "rdb-key-save-delay", "10000").Err())

	config := clusterProvider(cluster, fmt.Sprintf("db = %d", db), "min_replica_acks = 0") +
		acctest.NamedGroupConfig("existing", existing, "billing", "head") +
		acctest.NamedGroupConfig("fresh", fresh, "billing", "new")
	r := newCLIRun(t, config)
	acctest.MustDo(t, cluster.MigrateSlotAtomically(ctx, valkey.HashSlot(tag), target))
	started := time.Now()
	apply := r.apply().must(t, true)
	if owner := ownerOf(t, cluster, tag); owner != source {
		t.Fatalf("the migration ended %v after it started, before the apply did: the test did not apply during it", time.Since(started))
	}
	noCheckSkipped(t, apply)
	acctest.MustDo(t, cluster.WaitOwner(ctx, valkey.HashSlot(tag), target, time.Minute))
	acctest.MustDo(t, admin.ConfigSet(ctx, "rdb-key-save-delay", "0").Err())
	expectGroupsOn(t, target, db, map[string][]string{existing: {"billing"}, fresh: {"billing"}})
	noCheckSkipped(t, r.expectEmptyPlan())
}

// TestCLICluster_planAndApplyWhileSlotNodesDisagree: a stream whose slot's nodes keep
// redirecting it between them (the source MIGRATING answers ASK, the target, no longer
// IMPORTING, answers MOVED back) for the whole of a plan and an apply. The plan says, for that
// stream alone, that its check was skipped because the slot is moving: not a refusal, and no
// advice to configure the cluster attribute the provider already has. The other stream's
// check still runs. Apply fails for that group alone and writes nothing; once the nodes agree
// again, apply creates it.
func TestCLICluster_planAndApplyWhileSlotNodesDisagree(t *testing.T) {
	t.Parallel()
	needCLI(t)
	cluster := valkeytest.StartClusterT(t, 3, 0)
	ctx := context.Background()
	stuck, steady := valkeytest.Key(t, "emq:{%s}:stuck"), valkeytest.Key(t, "emq:{%s:other}:steady")
	for _, stream := range []string{stuck, steady} {
		seed := ownerOf(t, cluster, stream).Client()
		t.Cleanup(func() { _ = seed.Close() })
		valkeytest.XAdd(t, seed, stream, "1-1", "2-1")
	}
	seed := ownerOf(t, cluster, steady).Client()
	t.Cleanup(func() { _ = seed.Close() })
	acctest.MustDo(t, seed.XGroupCreate(ctx, steady, "billing", "0").Err())
	source := ownerOf(t, cluster, stuck)
	target := otherPrimary(t, cluster, source)
	migration, err := cluster.BeginMigration(ctx, valkey.HashSlot(stuck), target)
	acctest.MustDo(t, err)
	acctest.MustDo(t, migration.Move(ctx, 0, stuck))
	acctest.MustDo(t, migration.StopImporting(ctx))

	r := newCLIRun(t, clusterProvider(cluster, "min_replica_acks = 0")+
		acctest.NamedGroupConfig("stuck", stuck, "billing", "head")+acctest.NamedGroupConfig("steady", steady, "billing", "head"))
	plan := r.plan().must(t, true)
	redirected := func(command string) []string {
		return []string{fmt.Sprintf("kept redirecting %s on key %q (slot %d)", command, stuck, migration.Slot),
			"nothing was written", "valkey-cli --cluster check"}
	}
	diagtest.ExpectWarning(t, plan.diags, planwords.StreamCheckSkipped(stuck), 1, redirected("XINFO GROUPS")...)
	diagtest.ExpectWarning(t, plan.diags, diagtest.CheckSkippedSummary, 0)
	diagtest.ExpectWarning(t, plan.diags, planwords.GroupSummary(steady, "billing", planwords.WillBeAdopted, planwords.LagFigure("2")), 1)
	for _, d := range plan.diags {
		if text := diagtest.Unwrap(d.Detail); strings.Contains(text, "refused") || strings.Contains(text, "configure the provider's cluster attribute") {
			t.Errorf("plan diagnostic %q reads a redirection as a refusal: %s", d.Summary, text)
		}
	}

	apply := r.apply().must(t, false)
	errs := diagtest.Find(apply.diags, tfjson.DiagnosticSeverityError, "Consumer Group Not Created")
	if len(errs) != 1 || errs[0].Address != "valkey_stream_group.stuck" {
		t.Fatalf("apply errors %+v; want one Consumer Group Not Created for valkey_stream_group.stuck", errs)
	}
	for _, f := range redirected("XGROUP CREATE") {
		if !strings.Contains(diagtest.Unwrap(errs[0].Detail), f) {
			t.Errorf("apply error %q does not say %q", errs[0].Detail, f)
		}
	}
	acctest.MustDo(t, migration.ResumeImporting(ctx))
	if groups := target.Groups(t, 0, stuck); len(groups) != 0 {
		t.Errorf("the target holds groups %v on %s after a create the nodes only redirected", groups, stuck)
	}
	if state := r.stateGroups(); len(state) != 1 || state[0].Stream != steady || !state[0].Adopted {
		t.Errorf("state holds %+v; want only the adopted group of %s", state, steady)
	}

	noCheckSkipped(t, r.apply().must(t, true))
	expectGroupsOn(t, target, 0, map[string][]string{stuck: {"billing"}})
}
