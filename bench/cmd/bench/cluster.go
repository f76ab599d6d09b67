package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The Cluster scenario (issue 25): N groups over K hash-tagged streams on a Valkey Cluster of
// three primaries, once without replicas and once with a replica per primary and
// min_replica_acks = 1, side by side in one run with the same shape on one server and with
// the plugin floor: apply and no-change plan time, round trips per group on each node, and
// provider peak RSS.

// clusterCase is one way the shape meets servers.
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

// clusterOps are the commands the scenario times.
var clusterOps = []string{"apply", "plan"}

// clusterRun is one timed command of one case.
type clusterRun struct {
	opResult
	nodes []nodeCount // nil for the floor
}

// runCluster is the scenario: the deployments started, one untimed apply and plan per case,
// then cfg.reps repetitions of apply and plan per case and for the floor, in an order that
// rotates, each case from an empty server and an empty state.
func runCluster(ctx context.Context, cfg config, out string, tf *terraform) (*clusterResults, error) {
	began := time.Now()
	sh := cfg.clusterShape
	res := &clusterResults{shape: sh, reps: cfg.reps, runs: map[string]map[string][]clusterRun{}, groupsOn: map[string][]int{},
		date: time.Now().UTC().Format("2006-01-02 15:04 MST"), terraform: version(tf.bin, tf.env(), "version"),
		valkey: valkeyVersion(), loadStart: loadAvg(), parallelism: tf.parallelism}
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
			return nil, fmt.Errorf("%s: %w", c.label, err)
		}
		deps[c.key], res.groupsOn[c.key] = d, d.groupsOn
	}
	dirs := map[string]string{}
	for _, sub := range subjects[:2] {
		dir := filepath.Join(out, "work", fmt.Sprintf("cluster-%s-n%d-k%d", sub.key, sh.N, sh.K))
		if err := writeConfig(dir, sub, sh); err != nil {
			return nil, err
		}
		dirs[sub.key] = dir
	}
	keys := []string{"plugin"}
	for _, c := range clusterCases {
		keys = append(keys, c.key)
	}
	// once runs apply then plan of one case (or the floor) from an empty state and server.
	once := func(key string) (map[string]clusterRun, error) {
		dir, d := dirs["ours"], deps[key]
		if key == "plugin" {
			dir = dirs["plugin"]
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
			r, err := tf.run(ctx, dir, op, env...)
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
	for _, key := range keys {
		logf("cluster: warm-up %s", key)
		if _, err := once(key); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	for rep := range cfg.reps {
		for i := range keys {
			key := keys[(i+rep)%len(keys)]
			logf("cluster: rep %d/%d %s %s", rep+1, cfg.reps, sh, key)
			runs, err := once(key)
			if err != nil {
				return nil, err
			}
			if res.runs[key] == nil {
				res.runs[key] = map[string][]clusterRun{}
			}
			for op, r := range runs {
				res.runs[key][op] = append(res.runs[key][op], r)
			}
		}
	}
	res.loadEnd, res.elapsed = loadAvg(), time.Since(began).Round(time.Second)
	return res, nil
}
