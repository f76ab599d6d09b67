package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The cluster scenario: N groups over K hash-tagged streams on a Valkey Cluster of
// three primaries, once without replicas and once with a replica per primary and
// min_replica_acks = 1, side by side in one run with the same configuration on one server and
// with the plugin floor: apply and no-change plan time, round trips per group on each primary,
// and provider peak RSS. It runs on the first CLI of -terraform, and starts its own servers
// (valkeytest's binary and valkey-cli, as the server tests do): each primary sits behind a
// counting proxy.

var clusterFlag = flag.String("cluster", "1000/100",
	"N/K for the cluster scenario: N groups over K hash-tagged streams on 3 primaries, without and with replicas, on the first CLI of -terraform; empty leaves the scenario out")

// clusterShape is N groups over K streams.
type clusterShape struct{ n, k int }

// parseClusterShape reads -cluster, "N/K" with N >= 10 a multiple of K; empty is no scenario
// (the zero shape). -quick makes the default 100/10.
func parseClusterShape(quick bool) (clusterShape, error) {
	v := *clusterFlag
	if quick && !isFlagSet("cluster") {
		v = "100/10"
	}
	if strings.TrimSpace(v) == "" {
		return clusterShape{}, nil
	}
	var sh clusterShape
	if _, err := fmt.Sscanf(v, "%d/%d", &sh.n, &sh.k); err != nil || sh.n < 10 || sh.k < 1 || sh.n%sh.k != 0 {
		return clusterShape{}, fmt.Errorf("bad -cluster %q: want N/K with N >= 10 a multiple of K, or '' to leave the scenario out", v)
	}
	return sh, nil
}

// firstCLI is the first of -terraform, which the cluster scenario and the gate run.
func firstCLI() string { bin, _, _ := strings.Cut(*groupCLIs, ","); return bin }

// clusterCase is one way the configuration meets servers.
type clusterCase struct {
	key, label string
	cluster    bool
	replicas   int // per primary
	acks       int // min_replica_acks
}

var clusterCases = []clusterCase{
	{"standalone", "one server", false, 0, 0},
	{"cluster", "cluster, 3 primaries, `min_replica_acks = 0`", true, 0, 0},
	{"cluster-acks", "cluster, 3 primaries with a replica each, `min_replica_acks = 1`", true, 1, 1},
}

// clusterOps are the commands the scenario times: apply, and a plan that must find no changes.
var clusterOps = []string{"apply", "refresh"}

// clusterFloor is the plugin floor's key among the cases' in clusterResults.runs.
const clusterFloor = "floor"

// clusterRun is one timed command of one case.
type clusterRun struct {
	opResult
	nodes []nodeCount // nil for the floor
}

type clusterScenario struct{}

func (clusterScenario) name() string { return "cluster" }

// check fails early, before any measuring, on a bad -cluster, a missing CLI or no valkey-cli.
func (clusterScenario) check(b *bench) error {
	sh, err := parseClusterShape(b.quick)
	if err != nil || sh.n == 0 {
		return err
	}
	if err := checkCLI(firstCLI()); err != nil {
		return err
	}
	if _, err := valkeytest.Companion("valkey-cli"); err != nil {
		return fmt.Errorf("the cluster scenario creates its clusters with valkey-cli: %w; or leave the scenario out with -cluster ''", err)
	}
	return nil
}

// run is the scenario: the deployments started, one untimed apply and no-change plan per case
// and for the floor, then b.reps repetitions of both per case and for the floor, in an order that
// rotates, each from an empty server and an empty state.
func (clusterScenario) run(ctx context.Context, b *bench) (string, error) {
	began, load := time.Now(), loadAvg()
	sh, err := parseClusterShape(b.quick)
	if err != nil || sh.n == 0 {
		return "", err // -cluster '' leaves the scenario out
	}
	tf := b.terraform(firstCLI())
	res := &clusterResults{shape: sh, reps: b.reps, parallelism: b.parallelism, terraform: version(tf.bin, tf.env(), "version"),
		runs: map[string]map[string][]clusterRun{}, groupsOn: map[string][]int{}}
	deps := map[string]*deployment{}
	defer func() {
		for _, d := range deps {
			d.close()
		}
	}()
	for _, c := range clusterCases {
		logf("cluster: starting %s", c.label)
		d, err := startDeployment(ctx, c, sh)
		if err != nil {
			return "", fmt.Errorf("%s: %w", c.label, err)
		}
		deps[c.key], res.groupsOn[c.key] = d, d.groupsOn
	}
	dirs := map[string]string{}
	for _, sub := range []string{"ours", clusterFloor} {
		dir := filepath.Join(b.out, "work", fmt.Sprintf("cluster-%s-n%d-k%d", sub, sh.n, sh.k))
		if err := writeGroupConfig(dir, sub == clusterFloor, "blocks", sh.n, sh.k); err != nil {
			return "", err
		}
		dirs[sub] = dir
	}
	keys := []string{clusterFloor}
	for _, c := range clusterCases {
		keys = append(keys, c.key)
	}
	for _, key := range keys {
		logf("cluster: warm-up %s", key)
		if _, err := clusterOnce(ctx, tf, dirs, deps[key], key); err != nil {
			return "", fmt.Errorf("warm-up: %w", err)
		}
	}
	for rep := range b.reps {
		for i := range keys {
			key := keys[(i+rep)%len(keys)]
			logf("cluster: rep %d/%d N=%d K=%d %s", rep+1, b.reps, sh.n, sh.k, key)
			runs, err := clusterOnce(ctx, tf, dirs, deps[key], key)
			if err != nil {
				return "", err
			}
			if res.runs[key] == nil {
				res.runs[key] = map[string][]clusterRun{}
			}
			for op, r := range runs {
				res.runs[key][op] = append(res.runs[key][op], r)
			}
		}
	}
	return res.markdown(began, load), nil
}

// clusterOnce runs apply then the no-change plan of one case (d), or of the floor (d nil), from an empty
// state and an empty server, with each primary's counts after each command.
func clusterOnce(ctx context.Context, tf *terraform, dirs map[string]string, d *deployment, key string) (map[string]clusterRun, error) {
	dir := dirs["ours"]
	if d == nil {
		dir = dirs[clusterFloor]
	}
	for _, f := range []string{"terraform.tfstate", "terraform.tfstate.backup"} {
		_ = os.Remove(filepath.Join(dir, f))
	}
	var env []string
	if d != nil {
		if err := d.reset(ctx); err != nil {
			return nil, err
		}
		env = d.env
	}
	runs := map[string]clusterRun{}
	for _, op := range clusterOps {
		r, _, err := tf.run(ctx, dir, op, env...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		run := clusterRun{opResult: r}
		if d != nil {
			if run.nodes, err = d.counts(ctx); err != nil {
				return nil, err
			}
		}
		runs[op] = run
	}
	return runs, nil
}

// The cluster scenario's section of the report.

// clusterTarget is the largest ratio allowed between a cluster case and the plugin floor.
const clusterTarget = 1.10

// clusterResults are the cluster scenario's figures.
type clusterResults struct {
	shape             clusterShape
	reps, parallelism int
	terraform         string
	runs              map[string]map[string][]clusterRun // case or clusterFloor -> command -> timed runs
	groupsOn          map[string][]int                   // case -> groups on each primary
}

func (c *clusterResults) value(key, op string, of func(clusterRun) float64) spread {
	return over(c.runs[key][op], of)
}

// floorRatio pairs a case's runs with the floor's of the same repetition (they ran back to back).
func (c *clusterResults) floorRatio(key, op string) spread {
	return paired(c.runs[key][op], c.runs[clusterFloor][op], clusterRun.wallSecs)
}

// setupCommands each cost a round trip of their own that opens a connection (HELLO, and SELECT
// when a database is asked for) or a provider process's view of the cluster (the slot map, and
// the command table go-redis routes by): the same for 10 groups as for 10,000.
var setupCommands = []string{"hello", "select", "cluster|slots", "command"}

func (n nodeCount) setup() int64 {
	var trips int64
	for _, c := range setupCommands {
		trips += n.cmds[c]
	}
	return trips
}

// tripsOn is the median of round trips on primary i (all primaries together when i < 0); with
// work, only those beyond the set-up round trips.
func (c *clusterResults) tripsOn(key, op string, i int, work bool) float64 {
	count := func(n nodeCount) int64 {
		if work {
			return n.trips - n.setup()
		}
		return n.trips
	}
	return c.value(key, op, func(r clusterRun) float64 {
		if i >= 0 {
			return float64(count(r.nodes[i]))
		}
		var n int64
		for _, node := range r.nodes {
			n += count(node)
		}
		return float64(n)
	}).med
}

// markdown renders the scenario's section: conditions, method, targets, tables.
func (c *clusterResults) markdown(began time.Time, load string) string {
	var b strings.Builder
	b.WriteString(sectionHead(fmt.Sprintf("Cluster mode: %d groups over %d hash-tagged streams on 3 primaries", c.shape.n, c.shape.k), began, load,
		c.terraform+"; "+valkeyVersion()+" on every node", fmt.Sprintf("%d timed runs per case; `terraform -parallelism=%d`", c.reps, c.parallelism)))
	b.WriteString(clusterMethod)
	b.WriteString("### Targets\n\n")
	b.WriteString(c.targets())
	b.WriteString("\n### Results\n\n")
	b.WriteString(c.timesTable())
	b.WriteString(c.tripsTable())
	return b.String()
}

// targets checks each cluster case against the floor's time, one server's round trips per group,
// and one server's peak RSS.
func (c *clusterResults) targets() string {
	var b strings.Builder
	n := float64(c.shape.n)
	for _, cc := range clusterCases[1:] {
		for _, op := range clusterOps {
			r := c.floorRatio(cc.key, op)
			fmt.Fprintf(&b, "- %s, %s within %.2fx of the plugin floor: %s — %s.\n", cc.label, opLabels[op], clusterTarget, verdict(r.med <= clusterTarget), times(r))
		}
	}
	for _, cc := range clusterCases[1:] {
		for _, op := range clusterOps {
			ours, one := c.tripsOn(cc.key, op, -1, true)/n, c.tripsOn("standalone", op, -1, true)/n
			worst := 0.0
			for i, groups := range c.groupsOn[cc.key] {
				if groups > 0 {
					worst = max(worst, c.tripsOn(cc.key, op, i, true)/float64(groups))
				}
			}
			all, allOne := c.tripsOn(cc.key, op, -1, false)/n, c.tripsOn("standalone", op, -1, false)/n
			fmt.Fprintf(&b, "- %s, %s: no more round trips per group than one server: %s for the work of the groups — %.3f per group "+
				"against %.3f beyond the set-up round trips (each primary's own groups: at most %.3f); %s with the set-up counted — %.3f "+
				"against %.3f, %.0f set-up round trips against %.0f (a pool and its handshakes on each primary, each provider process's "+
				"slot map and command table: the same for 10 groups as for 10,000).\n",
				cc.label, opLabels[op], verdict(ours <= one), ours, one, worst, verdict(all <= allOne), all, allOne,
				c.tripsOn(cc.key, op, -1, false)-c.tripsOn(cc.key, op, -1, true), c.tripsOn("standalone", op, -1, false)-c.tripsOn("standalone", op, -1, true))
		}
	}
	for _, cc := range clusterCases[1:] {
		for _, op := range clusterOps {
			ours, one := c.value(cc.key, op, clusterRun.rssMiB).med, c.value("standalone", op, clusterRun.rssMiB).med
			fmt.Fprintf(&b, "- %s, %s: provider peak RSS within 1.2x of one server's: %s — %.1f MiB against %.1f MiB (%.2fx).\n",
				cc.label, opLabels[op], verdict(ours <= 1.2*one), ours, one, ours/one)
		}
	}
	return b.String()
}

func (c *clusterResults) timesTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Median (min–max) of %d timed runs. Ratios pair each run with the floor's of the same repetition.\n\n", c.reps)
	b.WriteString("| Case | Command | wall | / plugin floor | provider peak RSS, MiB | / one server | provider CPU, s |\n|---|---|---|---|---|---|---|\n")
	for _, op := range clusterOps {
		fmt.Fprintf(&b, "| plugin floor | %s | %s | — | %s | — | %.2f |\n", opLabels[op], secs(c.value(clusterFloor, op, clusterRun.wallSecs)),
			mib(c.value(clusterFloor, op, clusterRun.rssMiB)), c.value(clusterFloor, op, clusterRun.pluginSecs).med)
		for _, cc := range clusterCases {
			rss := c.value(cc.key, op, clusterRun.rssMiB)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.2fx | %.2f |\n", cc.label, opLabels[op], secs(c.value(cc.key, op, clusterRun.wallSecs)),
				times(c.floorRatio(cc.key, op)), mib(rss), rss.med/c.value("standalone", op, clusterRun.rssMiB).med,
				c.value(cc.key, op, clusterRun.pluginSecs).med)
		}
	}
	return b.String()
}

func (c *clusterResults) tripsTable() string {
	var b strings.Builder
	b.WriteString("\nRound trips by primary; set-up: those of `HELLO`, `SELECT`, `CLUSTER SLOTS` and `COMMAND`, each a round trip of its own.\n\n")
	b.WriteString("| Case | Command | primary | groups there | round trips | set-up | beyond set-up, per group | connections | server commands |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, cc := range clusterCases {
		for _, op := range clusterOps {
			for i, groups := range c.groupsOn[cc.key] {
				trips, work := c.tripsOn(cc.key, op, i, false), c.tripsOn(cc.key, op, i, true)
				conns := c.value(cc.key, op, func(r clusterRun) float64 { return float64(r.nodes[i].conns) }).med
				var cmds []map[string]int64
				for _, r := range c.runs[cc.key][op] {
					cmds = append(cmds, r.nodes[i].cmds)
				}
				fmt.Fprintf(&b, "| %s | %s | %d | %d | %.0f | %.0f | %.3f | %.0f | %s |\n", cc.label, opLabels[op], i+1, groups, trips, trips-work,
					work/float64(max(groups, 1)), conns, breakdown(medianCommands(cmds)))
			}
		}
	}
	return b.String()
}

const clusterMethod = `- Three deployments side by side in one run, each started for the scenario: one valkey-server; a
  cluster of 3 primaries (` + "`min_replica_acks = 0`" + `); and 3 primaries with a replica each
  (` + "`min_replica_acks = 1`" + `, EnsureGroup's ` + "`WAIT`" + ` on the primary that ran the create). The configuration is the
  groups scenario's blocks, over K streams: group ` + "`g<i>`" + ` on ` + "`bench:{s<i mod K>}:stream`" + `, hash-tagged, so the
  streams spread over the primaries by slot (each primary's share is in the last table). No stream exists
  before the apply, whose plan warns once a stream (` + "`Will Be Created`" + `), whatever each group's start.
- Each case and the plugin floor run apply, then a no-change plan, from an empty server and an empty
  state, once untimed and then in rotating order, the floor between them, so ratios pair runs made
  back to back.
- Round trips: every primary (and the one server) is reached through a counting proxy, for the
  timed runs too, so every case pays the same hop. A cluster's primaries announce the proxies' ports
  (` + "`cluster-announce-port`" + `), so the slot map, ` + "`MOVED`" + ` and ` + "`ASK`" + ` lead the provider there; replicas
  replicate through them unseen. The proxy counts only the provider's connections (they open with
  ` + "`HELLO`" + `): a round trip begins when the client writes after the server last did. Handshakes count.
- Peak RSS: the largest provider process of the command (` + "`rsswrap`" + `).

`
