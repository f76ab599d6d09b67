package systemtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// Cluster mode on the real CLI: db on every node, WAIT on the primary that ran the create, and
// what a user meets when the database is not there. The server's side is read on the nodes
// themselves: which node holds each group, in which database, and whether its replica has it.

// clusterDatabase is the database the cluster tests use and the node options that serve it:
// database 3 with cluster-databases on Valkey 9 and later, else database 0, the only one a
// cluster of an earlier version serves.
func clusterDatabase(t *testing.T) (int, []valkeytest.Option) {
	t.Helper()
	major, _ := valkeytest.VersionT(t)
	if major < 9 {
		return 0, nil
	}
	return 3, []valkeytest.Option{valkeytest.WithArgs("--cluster-databases", "16")}
}

// clusterProvider is a provider block for cluster, seeded with its first node only; extra
// lines come before the cluster object.
func clusterProvider(cluster *valkeytest.Cluster, extra ...string) string {
	return fmt.Sprintf("provider \"valkey\" {\n  %s\n  cluster = {\n    addresses = [%q]\n  }\n}\n",
		strings.Join(extra, "\n  "), cluster.Addrs()[0])
}

// ownerOf is the primary that serves key's slot.
func ownerOf(t *testing.T, cluster *valkeytest.Cluster, key string) *valkeytest.Server {
	t.Helper()
	owner, err := cluster.Owner(context.Background(), valkey.HashSlot(key))
	if err != nil {
		t.Fatal(err)
	}
	return owner
}

// noCheckSkipped fails when a run says that a plan-time check could not be made.
func noCheckSkipped(t *testing.T, res cliResult) {
	t.Helper()
	for _, d := range res.diags {
		if strings.Contains(d.Summary, planwords.CheckSkipped) {
			t.Errorf("terraform %s: %s: %s", res.command, d.Summary, d.Detail)
		}
	}
}

// atLeast reports whether the CLI under test is at least v.
func atLeast(t *testing.T, v string) bool {
	return !cliVersion(t).LessThan(version.Must(version.NewVersion(v)))
}

// TestCLICluster_databaseOnEveryNode: with db and cluster on a server that has databases in
// Cluster mode (Valkey 9's cluster-databases), plan, apply, the data source, drift, import and
// query all work in that database of the node owning each key, never in database 0, whose
// stream of the same name holds other entries and another group.
func TestCLICluster_databaseOnEveryNode(t *testing.T) {
	t.Parallel()
	needCLI(t)
	db, opts := clusterDatabase(t)
	if db == 0 {
		t.Skip("Valkey before 9.0 serves only database 0 in Cluster mode (TestCLICluster_databaseRefused covers it)")
	}
	cluster := valkeytest.StartClusterT(t, 3, 0, opts...)
	ctx := context.Background()
	prefix := valkeytest.Key(t, "emq-%s")
	streams := make([]string, 6)
	config := clusterProvider(cluster, fmt.Sprintf("db = %d", db), "min_replica_acks = 0")
	for i := range streams {
		streams[i] = fmt.Sprintf("%s:{s%d}:stream", prefix, i)
		config += acctest.NamedGroupConfig(fmt.Sprintf("g%d", i), streams[i], "billing", "head")
	}
	config += fmt.Sprintf("data \"valkey_stream\" \"s0\" {\n  key        = %q\n  depends_on = [valkey_stream_group.g0]\n}\n"+
		"output \"length\" {\n  value = data.valkey_stream.s0.length\n}\n", streams[0])
	// streams[0] holds 5 entries in database 3, and in database 0 a stream of the same name with
	// 2 entries and a group of its own.
	owner0 := ownerOf(t, cluster, streams[0])
	inDB, in0 := owner0.ClientDB(db), owner0.ClientDB(0)
	t.Cleanup(func() { _ = inDB.Close(); _ = in0.Close() })
	valkeytest.XAdd(t, inDB, streams[0], "1-1", "2-1", "3-1", "4-1", "5-1")
	valkeytest.XAdd(t, in0, streams[0], "1-1", "2-1")
	acctest.MustDo(t, in0.XGroupCreate(ctx, streams[0], "decoy", "0").Err())
	r := newCLIRun(t, config)

	plan := r.plan().must(t, true)
	noCheckSkipped(t, plan)
	diagtest.ExpectWarning(t, plan.diags, planwords.GroupSummary(streams[0], "billing", planwords.WillReplay, planwords.EntriesFigure(5)), 1)
	diagtest.ExpectWarning(t, plan.diags, diagtest.StreamCreatedSummary, len(streams)-1)

	noCheckSkipped(t, r.apply().must(t, true))
	for _, stream := range streams {
		owner := ownerOf(t, cluster, stream)
		if got := owner.Groups(t, db, stream); !slices.Equal(got, []string{"billing"}) {
			t.Errorf("database %d of %s, the owner of %s, holds groups %v; want billing", db, owner.Addr(), stream, got)
		}
		if stream != streams[0] && owner.Groups(t, 0, stream) != nil {
			t.Errorf("database 0 of %s holds %s", owner.Addr(), stream)
		}
	}
	if got := owner0.Groups(t, 0, streams[0]); !slices.Equal(got, []string{"decoy"}) {
		t.Errorf("database 0's stream of the same name holds %v; want its own group only", got)
	}
	outputs := read(r, "output", func(ctx context.Context) (map[string]tfexec.OutputMeta, error) { return r.tf.Output(ctx) })
	if got := string(outputs["length"].Value); got != "5" {
		t.Errorf("data.valkey_stream length = %s; want database %d's 5 entries", got, db)
	}

	// Drift in database 3 is seen, and the group is created there again.
	owner1 := ownerOf(t, cluster, streams[1])
	drift := owner1.ClientDB(db)
	t.Cleanup(func() { _ = drift.Close() })
	acctest.MustDo(t, drift.XGroupDestroy(ctx, streams[1], "billing").Err())
	if res := r.plan().must(t, true); !res.changes || res.summary == nil || res.summary.Add != 1 {
		t.Fatalf("plan after the group was destroyed in database %d: %+v\n%s", db, res.summary, res.output())
	}
	r.apply().must(t, true)
	if got := owner1.Groups(t, db, streams[1]); !slices.Equal(got, []string{"billing"}) {
		t.Errorf("after the drift, database %d of %s holds %v", db, owner1.Addr(), got)
	}

	// Import reads database 3.
	owner2 := ownerOf(t, cluster, streams[2])
	other := owner2.ClientDB(db)
	t.Cleanup(func() { _ = other.Close() })
	acctest.MustDo(t, other.XGroupCreate(ctx, streams[2], "audit", "0").Err())
	r.write(config + acctest.NamedGroupConfig("imported", streams[2], "audit", "head"))
	r.importID("valkey_stream_group.imported", streams[2]+"/audit").must(t, true)
	if g := r.stateGroup("imported"); g.Stream != streams[2] || g.Name != "audit" {
		t.Errorf("imported %+v", g)
	}
	r.apply().must(t, true) // records the declared start of the imported group, and sends nothing
	noCheckSkipped(t, r.expectEmptyPlan())

	if !atLeast(t, "1.14.0") {
		return // no terraform query before Terraform 1.14
	}
	r.put("groups.tfquery.hcl", queryConfig("all", fmt.Sprintf("match = %q", prefix+":*")))
	want := []string{streams[2] + " audit"}
	for _, s := range streams {
		want = append(want, s+" billing")
	}
	slices.Sort(want)
	if got := foundBy(r.query().must(t, true)).groups["list.valkey_stream_group.all"]; !slices.Equal(got, want) {
		t.Errorf("terraform query found %q; want database %d's groups on every primary, %q", got, db, want)
	}
}

// TestCLICluster_databaseRefused: db with a cluster that serves only database 0 (Valkey 8, or 9
// with cluster-databases left at 1). The plan succeeds with the one "check skipped" warning and
// the apply fails; both name the database, the node, the server's words and cluster-databases.
// Nothing is written to state, or to any database of any node.
func TestCLICluster_databaseRefused(t *testing.T) {
	t.Parallel()
	needCLI(t)
	cluster := valkeytest.StartClusterT(t, 3, 0)
	prefix := valkeytest.Key(t, "emq-%s")
	config := clusterProvider(cluster, "db = 3", "min_replica_acks = 0")
	for i := range 3 {
		config += acctest.NamedGroupConfig(fmt.Sprintf("g%d", i), fmt.Sprintf("%s:{s%d}:stream", prefix, i), "billing", "new")
	}
	r := newCLIRun(t, config)
	said := []string{"SELECT 3 failed", "of cluster " + cluster.Addrs()[0], "ERR ", "no database 3", "`cluster-databases`", "db (or VALKEY_DB) to 0"}

	plan := r.plan().must(t, true)
	diagtest.ExpectWarning(t, plan.diags, diagtest.CheckSkippedSummary, 1, said...)
	for _, d := range diagtest.Find(plan.diags, tfjson.DiagnosticSeverityWarning, diagtest.CheckSkippedSummary) {
		t.Logf("the plan says: %s", d.Detail)
		if !slices.ContainsFunc(cluster.Addrs(), func(a string) bool { return strings.Contains(d.Detail, "node "+a+" of cluster") }) {
			t.Errorf("the warning names no node of the cluster: %s", d.Detail)
		}
	}

	apply := r.apply().must(t, false)
	errs := diagtest.Find(apply.diags, tfjson.DiagnosticSeverityError, "Consumer Group Not Created")
	if len(errs) == 0 {
		t.Fatalf("apply failed without a Consumer Group Not Created error:\n%s", apply.output())
	}
	for _, d := range errs {
		for _, f := range said {
			if !strings.Contains(diagtest.Unwrap(d.Detail), f) {
				t.Errorf("apply's error does not mention %q: %s", f, d.Detail)
			}
		}
	}
	if groups := r.stateGroups(); len(groups) != 0 {
		t.Errorf("state holds %+v", groups)
	}
	for _, s := range cluster.Nodes {
		rdb := acctest.Admin(t, s)
		if n := valkeytest.CommandCalls(t, rdb, "xgroup|create"); n != 0 {
			t.Errorf("%s ran XGROUP CREATE %d times", s.Addr(), n)
		}
		dbs, err := valkeytest.Databases(context.Background(), s)
		acctest.MustDo(t, err)
		for db := range dbs {
			one := s.ClientDB(db)
			if n, err := one.DBSize(context.Background()).Result(); err != nil || n != 0 {
				t.Errorf("database %d of %s holds %d keys (err %v)", db, s.Addr(), n, err)
			}
			_ = one.Close()
		}
	}
}

// TestCLICluster_minReplicaAcks: with a cluster, Create waits for one replica by default, on
// the primary that ran the create: every group applied is on its owner's replica. When that
// replica is down the apply fails with "Not Confirmed By Replicas" naming the node, and the
// group stays out of state (it is on the primary, and applying again adopts it).
func TestCLICluster_minReplicaAcks(t *testing.T) {
	t.Parallel()
	needCLI(t)
	cluster := valkeytest.StartClusterT(t, 3, 1)
	ctx := context.Background()
	prefix := valkeytest.Key(t, "emq-%s")
	streams := make([]string, 6)
	config := clusterProvider(cluster, `replica_ack_timeout = "300ms"`)
	for i := range streams {
		streams[i] = fmt.Sprintf("%s:{s%d}:stream", prefix, i)
		config += acctest.NamedGroupConfig(fmt.Sprintf("g%d", i), streams[i], "billing", "new")
	}
	r := newCLIRun(t, config)
	r.apply().must(t, true)
	for _, stream := range streams {
		replicas, err := cluster.Replicas(ctx, valkey.HashSlot(stream))
		if err != nil || len(replicas) != 1 {
			t.Fatalf("replicas of %s: %v %v", stream, replicas, err)
		}
		readOnly := replicas[0].Client()
		conn := readOnly.Conn()
		acctest.MustDo(t, conn.ReadOnly(ctx).Err())
		if groups, err := conn.XInfoGroups(ctx, stream).Result(); err != nil || len(groups) != 1 {
			t.Errorf("the replica %s of %s's owner holds %v (err %v) right after the apply", replicas[0].Addr(), stream, groups, err)
		}
		_ = conn.Close()
		_ = readOnly.Close()
	}

	owner := ownerOf(t, cluster, streams[0])
	replicas, err := cluster.Replicas(ctx, valkey.HashSlot(streams[0]))
	acctest.MustDo(t, err)
	replicas[0].Stop()
	r.write(config + acctest.NamedGroupConfig("late", streams[0], "late", "new"))
	apply := r.apply().must(t, false)
	errs := diagtest.Find(apply.diags, tfjson.DiagnosticSeverityError, "Consumer Group Not Confirmed By Replicas")
	if len(errs) != 1 || !strings.Contains(diagtest.Unwrap(errs[0].Detail), "at node "+owner.Addr()+" of cluster") ||
		!strings.Contains(diagtest.Unwrap(errs[0].Detail), "only 0 of the 1 replicas") {
		t.Fatalf("apply with the owner's replica down: %+v\n%s", errs, apply.output())
	}
	if slices.ContainsFunc(r.stateGroups(), func(g stateGroup) bool { return g.Address == "late" }) {
		t.Error("the unconfirmed group is in state")
	}
	if got := owner.Groups(t, 0, streams[0]); !slices.Contains(got, "late") {
		t.Errorf("the owner %s holds %v; XGROUP CREATE should have created the group before WAIT fell short", owner.Addr(), got)
	}
}

// TestCLICluster_planFailsFastWhenAnnouncedNodesNeverAnswer: the seed answers, but the nodes
// announce addresses where a connect hangs, as private addresses do seen from a CI runner. The
// plan fails, within 30 s at the default dial_timeout, with one error that names an announced
// node and points to cluster.address_map and proxy, instead of skipping its checks and leaving
// apply to wait minutes for the same answer.
func TestCLICluster_planFailsFastWhenAnnouncedNodesNeverAnswer(t *testing.T) {
	t.Parallel()
	needCLI(t)
	cluster := valkeytest.StartClusterT(t, 3, 0)
	announced := cluster.AnnounceBlackholesT(t)

	config := clusterProvider(cluster, "min_replica_acks = 0")
	for i := range 3 {
		config += acctest.NamedGroupConfig(fmt.Sprintf("g%d", i), valkeytest.Key(t, fmt.Sprintf("emq:{%%s-%d}:stream", i)), "billing", "new")
	}
	r := newCLIRun(t, config)
	started := time.Now()
	plan := r.plan().must(t, false)
	took := time.Since(started)
	errs := diagtest.Find(plan.diags, tfjson.DiagnosticSeverityError, "Cluster Node Unreachable")
	if len(errs) != 1 {
		t.Fatalf("plan errors %+v; want one Cluster Node Unreachable\n%s", errs, plan.output())
	}
	detail := diagtest.Unwrap(errs[0].Detail)
	if !slices.ContainsFunc(announced, func(a string) bool { return strings.Contains(detail, "node "+a) }) ||
		!strings.Contains(detail, "cluster.address_map") || !strings.Contains(detail, "proxy") {
		t.Errorf("the error %q does not name an announced node (%v) and point to cluster.address_map and proxy", detail, announced)
	}
	if took > 30*time.Second {
		t.Errorf("the plan took %v to fail; a pipeline must learn this within 30 s", took)
	}
	if groups := r.stateGroups(); len(groups) != 0 {
		t.Errorf("state holds %+v after a failed plan", groups)
	}
}
