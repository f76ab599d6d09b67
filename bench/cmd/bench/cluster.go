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

// clusterCLI is the CLI the scenario runs: the first of -terraform.
func clusterCLI() string { bin, _, _ := strings.Cut(*groupCLIs, ","); return bin }

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
	if err := checkCLI(clusterCLI()); err != nil {
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
	tf := b.terraform(clusterCLI())
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
