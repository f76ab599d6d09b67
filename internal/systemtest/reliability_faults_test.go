package systemtest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The fault tests drive the real Terraform CLI against the built provider: concurrency and a
// server killed mid-apply need real processes. Every server here requires reliabilityPassword,
// which reaches the provider only through VALKEY_PASSWORD (withPassword), and every run is
// checked for it.

// startFaultServer runs an own server that requires reliabilityPassword, with extra args.
func startFaultServer(t *testing.T, args ...string) (*valkeytest.Server, *redis.Client) {
	t.Helper()
	srv := valkeytest.StartT(t, valkeytest.WithArgs(append([]string{"--requirepass", reliabilityPassword}, args...)...))
	return srv, authedAdmin(t, srv.Addr())
}

// authedAdmin is an assertion client for a server that requires reliabilityPassword.
func authedAdmin(t *testing.T, addr string) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: addr, Password: reliabilityPassword, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// serverGroupNames is stream -> its group names on the server, for the given streams.
func serverGroupNames(ctx context.Context, rdb redis.Cmdable, streams []string) (map[string]map[string]bool, int, error) {
	out, total := map[string]map[string]bool{}, 0
	for _, s := range streams {
		out[s] = map[string]bool{}
		groups, err := rdb.XInfoGroups(ctx, s).Result()
		if err != nil && !strings.Contains(err.Error(), "no such key") {
			return nil, 0, err
		}
		for _, g := range groups {
			out[s][g.Name] = true
			total++
		}
	}
	return out, total, nil
}

// expectErrorsOnly fails unless res has at least one error diagnostic and every error has one
// of the summaries and mentions fragment.
func expectErrorsOnly(t *testing.T, res cliResult, fragment string, summaries ...string) {
	t.Helper()
	n := 0
	for _, d := range res.diags {
		if d.Severity != tfjson.DiagnosticSeverityError {
			continue
		}
		n++
		if !slices.Contains(summaries, d.Summary) || !strings.Contains(diagtest.Unwrap(d.Detail), fragment) {
			t.Errorf("error %q: %s; want one of %q mentioning %q", d.Summary, d.Detail, summaries, fragment)
		}
	}
	if n == 0 {
		t.Errorf("terraform %s reported no error; diagnostics: %+v", res.command, res.diags)
	}
}

func TestCLIReliability_restartStorm(t *testing.T) {
	t.Parallel()
	const runs = 32
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, rdb := startFaultServer(t)
	stream := acctest.StreamKey(t)
	config := acctest.ProviderConfig(srv) + acctest.StreamGroupConfig(stream, "billing", "new")
	dirs := make([]*cliRun, runs)
	for i := range dirs {
		dirs[i] = newCLIRun(t, config).withPassword(reliabilityPassword)
		dirs[i].ctx = ctx
	}
	results := make([]cliResult, runs)
	start := time.Now()
	var wg sync.WaitGroup
	for i, r := range dirs {
		wg.Go(func() { results[i] = r.apply() })
	}
	wg.Wait()
	t.Logf("%d concurrent applies took %v", runs, time.Since(start))

	created, adopted, adoptWarnings := 0, 0, 0
	for i, res := range results {
		if res.err != nil {
			t.Errorf("apply %d failed: %v\n%s%s", i, res.err, res.stdout, res.stderr)
			continue
		}
		adoptWarnings += len(diagtest.Find(res.diags, tfjson.DiagnosticSeverityWarning, diagtest.AdoptedSummary))
		groups := dirs[i].stateGroups()
		if len(groups) != 1 || groups[0].Stream != stream || groups[0].Name != "billing" {
			t.Errorf("apply %d left state %+v, want the one group", i, groups)
			continue
		}
		if groups[0].Adopted {
			adopted++
		} else {
			created++
		}
	}
	if created != 1 || adopted != runs-1 || adoptWarnings != runs-1 {
		t.Errorf("%d created, %d adopted, %d adoption warnings; want 1, %d, %d", created, adopted, adoptWarnings, runs-1, runs-1)
	}
	names, total, err := serverGroupNames(ctx, rdb, []string{stream})
	if err != nil || total != 1 || !names[stream]["billing"] {
		t.Errorf("server holds %v (err %v), want exactly group billing", names, err)
	}
	if keys := rdb.DBSize(ctx).Val(); keys != 1 {
		t.Errorf("server holds %d keys, want the one stream", keys)
	}
	if calls := valkeytest.CommandCalls(t, rdb, "xgroup|create"); calls != runs {
		t.Errorf("XGROUP CREATE ran %d times, want once per apply: %d", calls, runs)
	}
	for i, r := range dirs {
		r.expectNoSecret(reliabilityPassword, results[i])
	}
}

// testAccManyGroupsConfig declares n groups spread over streams streams under prefix.
func testAccManyGroupsConfig(prefix string, n, streams int) string {
	return fmt.Sprintf(`
resource "valkey_stream_group" "g" {
  count       = %[2]d
  stream      = format("%%s:%%02d", %[1]q, count.index %% %[3]d)
  name        = "g${count.index}"
  group_start = "new"
}
`, prefix, n, streams)
}

func manyStreams(prefix string, streams int) []string {
	out := make([]string, streams)
	for i := range out {
		out[i] = fmt.Sprintf("%s:%02d", prefix, i)
	}
	return out
}

func TestCLIReliability_serverKilledMidApply(t *testing.T) {
	t.Parallel()
	const groups, streams = 200, 20
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, rdb := startFaultServer(t, "--appendonly", "yes", "--appendfsync", "always")
	prefix := acctest.StreamKey(t)
	r := newCLIRun(t, acctest.ProviderConfig(srv)+testAccManyGroupsConfig(prefix, groups, streams))
	r.withPassword(reliabilityPassword).ctx = ctx

	plan := r.plan(tfexec.Out(planFile)).must(t, true)
	saved, planJSON := r.showPlan()
	if len(saved.ResourceChanges) != groups {
		t.Fatalf("show -json tfplan holds %d resource changes, want %d:\n%s", len(saved.ResourceChanges), groups, planJSON.stdout)
	}
	applied := make(chan cliResult, 1)
	start := time.Now()
	go func() { applied <- r.apply(tfexec.DirOrPlan(planFile)) }()
	// Kill the server (SIGKILL) once the first groups are on it.
	before := waitCreates(t, rdb, 5)
	srv.Stop()
	killedAt := time.Since(start)
	failed := <-applied
	t.Logf("killed after %d creates, %v into the apply; the apply failed %v after start", before, killedAt, time.Since(start))
	if failed.err == nil {
		t.Fatalf("the apply succeeded although the server was killed after %d of %d creates", before, groups)
	}
	// A Create whose connection was open when the server died lost its reply (XGROUP CREATE may
	// have run); the Creates after it could not connect. Both are loud and name the address.
	expectErrorsOnly(t, failed, srv.Addr(), "Consumer Group Not Created", "Consumer Group Outcome Unknown")

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	valkeytest.WaitLoaded(t, rdb) // the AOF replays after the restart
	inState := r.stateGroups()
	onServer, total, err := serverGroupNames(ctx, rdb, manyStreams(prefix, streams))
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, g := range inState {
		if !onServer[g.Stream][g.Name] {
			lost++
			t.Errorf("group %q of %q is in state but not on the server after the restart", g.Name, g.Stream)
		}
	}
	t.Logf("after the kill: %d groups in state, %d on the server after restart, %d lost", len(inState), total, lost)
	if len(inState) == 0 || len(inState) >= groups {
		t.Errorf("%d groups in state after the kill; want some but not all of %d", len(inState), groups)
	}

	reapply := r.apply().must(t, true)
	for _, d := range reapply.diags {
		if d.Severity == tfjson.DiagnosticSeverityError {
			t.Errorf("re-apply error: %s: %s", d.Summary, d.Detail)
		}
	}
	// Groups the server made but whose reply died with it are adopted, and only those.
	if got, want := len(diagtest.Find(reapply.diags, tfjson.DiagnosticSeverityWarning, diagtest.AdoptedSummary)), total-len(inState); got != want {
		t.Errorf("re-apply adopted %d groups; want the %d on the server but not in state", got, want)
	}
	_, total, err = serverGroupNames(ctx, rdb, manyStreams(prefix, streams))
	if err != nil || total != groups {
		t.Errorf("server holds %d groups after the re-apply (err %v), want %d", total, err, groups)
	}
	if n := len(r.stateGroups()); n != groups {
		t.Errorf("state holds %d groups after the re-apply, want %d", n, groups)
	}
	final := r.expectEmptyPlan()
	r.expectNoSecret(reliabilityPassword, plan, planJSON, failed, reapply, final)
}

func TestCLIReliability_refreshWithServerDownKeepsStateBytes(t *testing.T) {
	t.Parallel()
	srv, _ := startFaultServer(t)
	prefix := acctest.StreamKey(t)
	r := newCLIRun(t, acctest.ProviderConfig(srv)+testAccManyGroupsConfig(prefix, 6, 2)).withPassword(reliabilityPassword)
	apply := r.apply().must(t, true)
	before := r.readState()
	srv.Stop()
	runs := []cliResult{apply}
	for _, res := range []func() cliResult{
		func() cliResult { return r.refresh() },
		func() cliResult { return r.apply(tfexec.RefreshOnly(true)) },
		func() cliResult { return r.plan() },
	} {
		res := res().must(t, false)
		expectErrorsOnly(t, res, "Could not talk to Valkey at "+srv.Addr(), "Consumer Group Not Read")
		// The state file is what the CLI wrote: compared byte for byte, not read through show.
		if after := r.readState(); !bytes.Equal(before, after) {
			t.Errorf("terraform %s with the server down changed terraform.tfstate:\nbefore %s\nafter  %s", res.command, before, after)
		}
		runs = append(runs, res)
	}
	r.expectNoSecret(reliabilityPassword, runs...)
}

// TestCLIReliability_sentinelFailoverDuringApplies runs applies that each add groups while
// Sentinel fails the primary over: applies caught in the switch may fail (and are run again),
// but every group any apply recorded in state is on the new primary, and the last apply leaves
// exactly the declared groups there.
func TestCLIReliability_sentinelFailoverDuringApplies(t *testing.T) {
	t.Parallel()
	const rounds, perRound, streams = 6, 10, 5
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st := valkeytest.StartSentinelT(t, 2)
	prefix := acctest.StreamKey(t)
	config := func(n int) string {
		return fmt.Sprintf("provider \"valkey\" {\n  username = \"default\"\n  sentinel = {\n    master_name = %q\n    addresses   = [%q, %q]\n  }\n}\n",
			st.MasterName, st.Addrs()[0], st.Addrs()[1]) + testAccManyGroupsConfig(prefix, n, streams)
	}
	r := newCLIRun(t, config(perRound)).withPassword(reliabilityPassword)
	r.ctx = ctx
	var runs []cliResult
	seen := map[[2]string]bool{} // every (stream, name) any apply recorded, adopted or not
	failover := make(chan error, 1)
	failedApplies := 0
	for round := 1; round <= rounds; round++ {
		if round == 3 {
			go func() { failover <- st.Failover(ctx) }()
		}
		r.write(config(round * perRound))
		for attempt := 1; ; attempt++ {
			res := r.apply()
			runs = append(runs, res)
			for _, g := range r.stateGroups() {
				seen[[2]string{g.Stream, g.Name}] = true
			}
			if res.err == nil {
				break
			}
			failedApplies++
			if attempt == 30 { // until the old primary rejoins as a replica and writes are confirmed again
				t.Fatalf("round %d: apply still fails after %d attempts: %s", round, attempt, res.stdout)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	if err := <-failover; err != nil {
		t.Fatal(err)
	}
	primary := acctest.Admin(t, st.Replica) // promoted
	if role := valkeytest.InfoField(t, primary, "replication", "role"); role != "master" {
		t.Fatalf("the replica was not promoted: role %s", role)
	}
	onServer, total, err := serverGroupNames(ctx, primary, manyStreams(prefix, streams))
	if err != nil {
		t.Fatal(err)
	}
	for g := range seen {
		if stream, name := g[0], g[1]; !onServer[stream][name] {
			t.Errorf("group %q of %q was recorded in state but is not on the new primary", name, stream)
		}
	}
	if total != rounds*perRound || len(r.stateGroups()) != rounds*perRound {
		t.Errorf("new primary holds %d groups, state %d; want %d", total, len(r.stateGroups()), rounds*perRound)
	}
	t.Logf("%d rounds, %d applies failed during the failover and were re-run, %d groups recorded, none lost", rounds, failedApplies, len(seen))
	r.expectNoSecret(reliabilityPassword, runs...)
}

// waitCreates waits, for up to a minute, until the server behind rdb has run XGROUP CREATE at
// least n times, and returns the count it saw.
func waitCreates(t *testing.T, rdb *redis.Client, n int) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		calls := valkeytest.CommandCalls(t, rdb, "xgroup|create")
		if calls >= n {
			return calls
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d XGROUP CREATE reached the server within a minute, want %d", calls, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitCluster waits until every node reports cluster_state:ok and ok(CLUSTER NODES) holds.
func waitCluster(t *testing.T, nodes []*valkeytest.Server, ok func(clusterNodes string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range nodes {
		rdb := acctest.Admin(t, s)
		for {
			info := rdb.ClusterInfo(context.Background()).Val()
			if strings.Contains(info, "cluster_state:ok") && ok(rdb.ClusterNodes(context.Background()).Val()) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s not ready within 30s: %s\n%s", s.Addr(), info, rdb.ClusterNodes(context.Background()).Val())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestCLIReliability_clusterMasterKilledDuringApply kills the master that owns the groups'
// slot while an apply runs; once its replica is promoted and the old master is back as the new
// primary's replica (Create waits for one replica by default in a cluster), re-applies
// converge and every group recorded in state is on the cluster.
func TestCLIReliability_clusterMasterKilledDuringApply(t *testing.T) {
	t.Parallel()
	const groups, streams = 100, 10
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// cluster-replica-validity-factor 0 lets a replica stand for election however long ago it
	// heard from its master: with the default (10) and a 1s node timeout, the replica of a
	// killed master was never promoted within 30s here.
	cluster := valkeytest.StartClusterT(t, 3, 1,
		valkeytest.WithArgs("--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0"))
	prefix := acctest.StreamKey(t) // one hash tag: every stream lives on one master
	owner, err := cluster.Owner(ctx, valkey.HashSlot(prefix))
	if err != nil {
		t.Fatal(err)
	}
	addrs := make([]string, len(cluster.Nodes))
	for i, a := range cluster.Addrs() {
		addrs[i] = strconv.Quote(a)
	}
	r := newCLIRun(t, fmt.Sprintf("provider \"valkey\" {\n  username = \"default\"\n  cluster = {\n    addresses = [%s]\n  }\n}\n", strings.Join(addrs, ", "))+
		testAccManyGroupsConfig(prefix, groups, streams))
	r.withPassword(reliabilityPassword).ctx = ctx
	ownerAdmin := acctest.Admin(t, owner)

	applied := make(chan cliResult, 1)
	go func() { applied <- r.apply() }()
	waitCreates(t, ownerAdmin, 5)
	owner.Stop()
	killedAt := time.Now()
	runs := []cliResult{<-applied}
	inState := r.stateGroups()
	var alive []*valkeytest.Server
	for _, s := range cluster.Nodes {
		if s != owner {
			alive = append(alive, s)
		}
	}
	waitCluster(t, alive, func(nodes string) bool { return strings.Count(nodes, "master") >= 4 }) // 3 serving + the failed one
	t.Logf("first apply ok=%v with %d groups in state; replica promoted %v after the kill", runs[0].err == nil, len(inState), time.Since(killedAt))
	// The promoted replica has no replica of its own until the old master returns as one: until
	// then no write there can be confirmed, and Create says so rather than record it.
	if err := owner.Restart(); err != nil {
		t.Fatal(err)
	}
	waitCluster(t, alive, func(nodes string) bool { return strings.Count(nodes, "slave") == 3 && !strings.Contains(nodes, "fail") })

	for attempt := 1; ; attempt++ {
		res := r.apply()
		runs = append(runs, res)
		if res.err == nil {
			break
		}
		if attempt == 10 {
			t.Fatalf("re-apply still fails after the promotion: %s", res.stdout)
		}
		time.Sleep(time.Second)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{alive[0].Addr()}, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { _ = rdb.Close() })
	onServer, total, err := serverGroupNames(ctx, rdb, manyStreams(prefix, streams))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range inState {
		if !onServer[g.Stream][g.Name] {
			t.Errorf("group %q of %q was in state before the failover but is not on the cluster", g.Name, g.Stream)
		}
	}
	if total != groups || len(r.stateGroups()) != groups {
		t.Errorf("cluster holds %d groups, state %d; want %d", total, len(r.stateGroups()), groups)
	}
	runs = append(runs, r.expectEmptyPlan())
	r.expectNoSecret(reliabilityPassword, runs...)
}
