package faultproxy

import (
	"context"
	"fmt"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ProxiedCluster is a Valkey Cluster of masters whose every node sits behind a Proxy and
// announces the proxy's port (cluster-announce-port, with the real bus port as
// cluster-announce-bus-port): CLUSTER SLOTS, CLUSTER SHARDS, CLUSTER NODES and MOVED replies all
// name the proxies, so a cluster client that starts at a proxy never talks to a node directly,
// and every fault injected into the proxies reaches it. Restarts keep the announcement (it is
// among the node's arguments).
type ProxiedCluster struct {
	*valkeytest.Cluster
	Proxies []*Proxy // Proxies[i] forwards to Nodes[i]
}

// StartProxiedClusterT starts a ProxiedCluster of masters nodes (no replicas) for one test and
// closes it when the test ends.
func StartProxiedClusterT(tb testing.TB, masters int, opts ...valkeytest.Option) *ProxiedCluster {
	tb.Helper()
	valkeytest.Need(tb, "valkey-cli")
	pc, err := StartProxiedCluster(masters, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pc.Close)
	return pc
}

// StartProxiedCluster starts a cluster of masters, a proxy in front of each node, makes each
// node announce its proxy, and waits until every node reports cluster_state:ok and CLUSTER
// SLOTS names the proxies only (the nodes gossip the new ports).
func StartProxiedCluster(masters int, opts ...valkeytest.Option) (*ProxiedCluster, error) {
	c, err := valkeytest.StartCluster(masters, 0, opts...)
	if err != nil {
		return nil, err
	}
	pc := &ProxiedCluster{Cluster: c}
	ctx := context.Background()
	for _, s := range c.Nodes {
		p, err := StartProxy(s.Addr())
		if err != nil {
			pc.Close()
			return nil, err
		}
		pc.Proxies = append(pc.Proxies, p)
		_, port, _ := net.SplitHostPort(p.Addr())
		announce := []string{"cluster-announce-port", port, "cluster-announce-bus-port", strconv.Itoa(s.Port + 10000)}
		rdb := s.Client()
		err = rdb.ConfigSet(ctx, announce[2], announce[3]).Err()
		if err == nil {
			err = rdb.ConfigSet(ctx, announce[0], announce[1]).Err()
		}
		_ = rdb.Close()
		if err != nil {
			pc.Close()
			return nil, fmt.Errorf("CONFIG SET cluster-announce-port on %s: %w", s.Addr(), err)
		}
		s.AddArgs("--"+announce[0], announce[1], "--"+announce[2], announce[3])
	}
	if err := pc.WaitReady(30 * time.Second); err != nil {
		pc.Close()
		return nil, err
	}
	return pc, nil
}

// WaitReady waits until every node reports cluster_state:ok and its CLUSTER SLOTS names only
// the proxies, as after a start or a restart of a node.
func (pc *ProxiedCluster) WaitReady(limit time.Duration) error {
	if err := pc.WaitOK(limit, 0); err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	for _, s := range pc.Nodes {
		for {
			slots, err := pc.slotAddrs(s)
			if err == nil && pc.allProxies(slots) {
				break
			}
			if time.Now().After(deadline) {
				if err != nil {
					return fmt.Errorf("node %s: CLUSTER SLOTS: %w", s.Addr(), err)
				}
				return fmt.Errorf("node %s does not name the proxies within %v: CLUSTER SLOTS names %v", s.Addr(), limit, slots)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// slotAddrs is every address CLUSTER SLOTS on s names.
func (pc *ProxiedCluster) slotAddrs(s *valkeytest.Server) ([]string, error) {
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	ranges, err := rdb.ClusterSlots(context.Background()).Result() //nolint:staticcheck // the map go-redis reads
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, r := range ranges {
		for _, n := range r.Nodes {
			addrs = append(addrs, n.Addr)
		}
	}
	return addrs, nil
}

func (pc *ProxiedCluster) allProxies(addrs []string) bool {
	if len(addrs) < len(pc.Proxies) {
		return false
	}
	for _, a := range addrs {
		found := false
		for _, p := range pc.Proxies {
			found = found || p.Addr() == a
		}
		if !found {
			return false
		}
	}
	return true
}

// ProxyAddrs lists the proxies' host:port, the addresses clients are given.
func (pc *ProxiedCluster) ProxyAddrs() []string {
	addrs := make([]string, len(pc.Proxies))
	for i, p := range pc.Proxies {
		addrs[i] = p.Addr()
	}
	return addrs
}

// NodeOf is the node serving slot, found through CLUSTER SLOTS (which names its proxy).
func (pc *ProxiedCluster) NodeOf(ctx context.Context, slot int) (*valkeytest.Server, error) {
	rdb := pc.Nodes[0].Client()
	defer func() { _ = rdb.Close() }()
	ranges, err := rdb.ClusterSlots(ctx).Result() //nolint:staticcheck // the map go-redis reads
	if err != nil {
		return nil, err
	}
	for _, r := range ranges {
		if r.Start <= slot && slot <= r.End && len(r.Nodes) > 0 {
			for i, p := range pc.Proxies {
				if p.Addr() == r.Nodes[0].Addr {
					return pc.Nodes[i], nil
				}
			}
		}
	}
	return nil, fmt.Errorf("slot %d has no owner among the proxies %s", slot, strings.Join(pc.ProxyAddrs(), ","))
}

// Close stops the proxies and the nodes.
func (pc *ProxiedCluster) Close() {
	for _, p := range pc.Proxies {
		p.Close()
	}
	pc.Cluster.Close()
}
