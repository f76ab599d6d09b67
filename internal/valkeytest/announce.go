package valkeytest

import (
	"context"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"
)

// AnnounceT makes node i of c announce the port of addrs[i] (cluster-announce-port, its real
// bus port kept), as nodes behind forwards or in a private network do, and waits until every
// node's CLUSTER SLOTS names only those addresses. The nodes are still served at their own.
func (c *Cluster) AnnounceT(tb testing.TB, addrs []string) {
	tb.Helper()
	ctx := context.Background()
	for i, node := range c.Nodes {
		_, port, err := net.SplitHostPort(addrs[i])
		if err != nil {
			tb.Fatal(err)
		}
		rdb := node.Client()
		err = rdb.ConfigSet(ctx, "cluster-announce-bus-port", strconv.Itoa(node.Port+10000)).Err()
		if err == nil {
			err = rdb.ConfigSet(ctx, "cluster-announce-port", port).Err()
		}
		_ = rdb.Close()
		if err != nil {
			tb.Fatalf("announcing %s for %s: %v", addrs[i], node.Addr(), err)
		}
	}
	err := waitFor(20*time.Second, func() bool {
		for _, node := range c.Nodes {
			rdb := node.Client()
			slots, err := rdb.ClusterSlots(ctx).Result() //nolint:staticcheck // the map cluster clients read
			_ = rdb.Close()
			if err != nil {
				return false
			}
			for _, s := range slots {
				for _, n := range s.Nodes {
					if !slices.Contains(addrs, n.Addr) {
						return false
					}
				}
			}
		}
		return true
	})
	if err != nil {
		tb.Fatalf("the nodes do not announce %v: %v", addrs, err)
	}
}

// AnnounceBlackholesT makes every node of c announce an address where a connect hangs
// (BlackholeT), as private addresses do seen from outside their network, and returns them.
func (c *Cluster) AnnounceBlackholesT(tb testing.TB) []string {
	tb.Helper()
	addrs := make([]string, len(c.Nodes))
	for i := range c.Nodes {
		addrs[i] = BlackholeT(tb)
	}
	c.AnnounceT(tb, addrs)
	return addrs
}
