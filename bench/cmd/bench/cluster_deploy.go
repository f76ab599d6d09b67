package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// deployment is the servers of one case. The provider reaches each primary through a tripProxy:
// a cluster's primaries announce the proxies' ports (cluster-announce-port), so CLUSTER SLOTS,
// MOVED and ASK name the proxies, and their own bus ports for the cluster bus.
type deployment struct {
	c         clusterCase
	primaries []*valkeytest.Server
	proxies   []*tripProxy // proxies[i] fronts primaries[i]
	groupsOn  []int        // groups whose stream lives on primaries[i]
	env       []string     // what points the provider at it
	stop      func()
}

func startDeployment(ctx context.Context, c clusterCase, sh clusterShape) (*deployment, error) {
	d := &deployment{c: c}
	var cluster *valkeytest.Cluster
	if c.cluster {
		var err error
		if cluster, err = valkeytest.StartCluster(3, c.replicas); err != nil {
			return nil, err
		}
		d.stop = cluster.Close
		for _, s := range cluster.Nodes {
			if isPrimary(ctx, s) {
				d.primaries = append(d.primaries, s)
			}
		}
	} else {
		srv, err := valkeytest.Start()
		if err != nil {
			return nil, err
		}
		d.stop, d.primaries = srv.Close, []*valkeytest.Server{srv}
	}
	var addrs []string
	for _, s := range d.primaries {
		p, err := startTripProxy(s.Addr())
		if err != nil {
			d.close()
			return nil, err
		}
		d.proxies, addrs = append(d.proxies, p), append(addrs, p.Addr())
		if c.cluster {
			if err := do(ctx, s, "CONFIG", "SET", "cluster-announce-port", p.Port(), "cluster-announce-bus-port", s.Port+10000); err != nil {
				d.close()
				return nil, err
			}
		}
	}
	if !c.cluster {
		d.env = []string{"VALKEY_URL=valkey://" + addrs[0] + "/0"}
		d.groupsOn = []int{sh.n}
		return d, nil
	}
	d.env = []string{"VALKEY_CLUSTER_ADDRESSES=" + strings.Join(addrs, ","), "VALKEY_MIN_REPLICA_ACKS=" + strconv.Itoa(c.acks)}
	if err := d.waitAnnounced(ctx, cluster); err != nil {
		d.close()
		return nil, err
	}
	if err := d.countGroups(ctx, sh); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// countGroups finds each primary's share of the groups in the slot map, which names
// the primaries by their proxies' addresses.
func (d *deployment) countGroups(ctx context.Context, sh clusterShape) error {
	rdb := d.primaries[0].Client()
	defer func() { _ = rdb.Close() }()
	ranges, err := rdb.ClusterSlots(ctx).Result() //nolint:staticcheck // the slot map the provider reads
	if err != nil {
		return err
	}
	d.groupsOn = make([]int, len(d.primaries))
	for i := range sh.n {
		slot := valkey.HashSlot(groupStream(i % sh.k))
		owner := slices.IndexFunc(ranges, func(r redis.ClusterSlot) bool { return r.Start <= slot && slot <= r.End })
		at := -1
		if owner >= 0 {
			at = slices.IndexFunc(d.proxies, func(p *tripProxy) bool { return p.Addr() == ranges[owner].Nodes[0].Addr })
		}
		if at < 0 {
			return fmt.Errorf("no proxied primary serves slot %d", slot)
		}
		d.groupsOn[at]++
	}
	return nil
}

// waitAnnounced waits until every node's CLUSTER SLOTS names the proxies, and every replica is
// linked to its primary again (through the proxy, its primary's address now).
func (d *deployment) waitAnnounced(ctx context.Context, cluster *valkeytest.Cluster) error {
	want := map[string]bool{}
	for _, p := range d.proxies {
		want[strconv.Itoa(p.Port())] = true
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range cluster.Nodes {
		for {
			ok, err := announced(ctx, s, want, d.c.replicas > 0 && !slices.Contains(d.primaries, s))
			if ok {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s never named the proxies: %w", s.Addr(), err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func announced(ctx context.Context, s *valkeytest.Server, proxyPorts map[string]bool, replica bool) (bool, error) {
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	ranges, err := rdb.ClusterSlots(ctx).Result() //nolint:staticcheck // the slot map the provider reads
	if err != nil {
		return false, err
	}
	for _, r := range ranges {
		if _, port, _ := strings.Cut(r.Nodes[0].Addr, ":"); !proxyPorts[port] {
			return false, fmt.Errorf("slots %d-%d at %s", r.Start, r.End, r.Nodes[0].Addr)
		}
	}
	if replica {
		info, err := valkeytest.Info(ctx, rdb, "replication")
		return err == nil && info["master_link_status"] == "up", err
	}
	return true, nil
}

func (d *deployment) close() {
	d.stop()
	for _, p := range d.proxies {
		p.close()
	}
}

// reset empties every primary (Delete leaves groups on the server by design) and its command
// counts, and the proxies' counts.
func (d *deployment) reset(ctx context.Context) error {
	for i, s := range d.primaries {
		if err := do(ctx, s, "FLUSHALL"); err != nil {
			return err
		}
		if err := do(ctx, s, "CONFIG", "RESETSTAT"); err != nil {
			return err
		}
		d.proxies[i].take()
	}
	return nil
}

// counts are what each primary saw since the last reset: round trips, connections, commands.
func (d *deployment) counts(ctx context.Context) ([]nodeCount, error) {
	out := make([]nodeCount, len(d.primaries))
	for i, s := range d.primaries {
		rdb := s.Client()
		cmds, err := commandStats(ctx, rdb)
		_ = rdb.Close()
		if err != nil {
			return nil, err
		}
		delete(cmds, "replconf") // the replica's acknowledgements, not the provider's
		trips, conns := d.proxies[i].take()
		out[i] = nodeCount{trips: trips, conns: conns, cmds: cmds}
		if err := do(ctx, s, "CONFIG", "RESETSTAT"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// nodeCount is one primary's share of one command.
type nodeCount struct {
	trips, conns int64
	cmds         map[string]int64
}

func isPrimary(ctx context.Context, s *valkeytest.Server) bool {
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	info, err := valkeytest.Info(ctx, rdb, "replication")
	return err == nil && info["role"] == "master"
}

func do(ctx context.Context, s *valkeytest.Server, args ...any) error {
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	if err := rdb.Do(ctx, args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("%v on %s: %w", args[0], s.Addr(), err)
	}
	return nil
}
