package valkeytest

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Valkey Cluster of masters only, each node a Server on loopback.
type Cluster struct {
	Nodes []*Server
}

// StartCluster launches masters nodes with cluster mode on, joins them with
// `valkey-cli --cluster create`, and waits until every node reports cluster_state:ok.
func StartCluster(masters int, opts ...Option) (*Cluster, error) {
	c := &Cluster{}
	addrs := make([]string, 0, masters)
	for range masters {
		s, err := Start(append([]Option{WithArgs(
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000",
		)}, opts...)...)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr())
	}
	cli, err := exec.LookPath("valkey-cli")
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("valkey-cli not found: run scripts/setup.sh")
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		c.Close()
		return nil, fmt.Errorf("valkey-cli --cluster create: %w\n%s", err, out)
	}
	if err := c.waitOK(15 * time.Second); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) waitOK(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, s := range c.Nodes {
		rdb := s.Client()
		for {
			info, _ := rdb.ClusterInfo(context.Background()).Result()
			if strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				rdb.Close()
				return fmt.Errorf("node %s did not reach cluster_state:ok within %v: %q", s.Addr(), limit, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		rdb.Close()
	}
	return nil
}

// Addrs lists the nodes' host:port.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Client returns a go-redis cluster client for assertions; the caller closes it.
func (c *Cluster) Client() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), Protocol: 2, DisableIdentity: true})
}

// Owner is the node serving slot, as CLUSTER SLOTS on the first node reports it.
func (c *Cluster) Owner(ctx context.Context, slot int) (*Server, error) {
	rdb := c.Nodes[0].Client()
	defer rdb.Close()
	ranges, err := rdb.ClusterSlots(ctx).Result() //nolint:staticcheck // CLUSTER SLOTS answers the slot-to-node map the test needs on every Valkey version
	if err != nil {
		return nil, err
	}
	for _, r := range ranges {
		if r.Start <= slot && slot <= r.End && len(r.Nodes) > 0 {
			for _, s := range c.Nodes {
				if s.Addr() == r.Nodes[0].Addr {
					return s, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("slot %d has no owner among %v", slot, c.Addrs())
}

// MigrateSlot moves slot, with its keys, from its owner to dst, the way valkey-cli's
// reshard does: IMPORTING/MIGRATING, MIGRATE of every key, then SETSLOT NODE everywhere.
func (c *Cluster) MigrateSlot(ctx context.Context, slot int, dst *Server) error {
	src, err := c.Owner(ctx, slot)
	if err != nil {
		return err
	}
	if src == dst {
		return fmt.Errorf("slot %d already lives on %s", slot, dst.Addr())
	}
	srcC, dstC := src.Client(), dst.Client()
	defer srcC.Close()
	defer dstC.Close()
	srcID, err := srcC.ClusterMyID(ctx).Result()
	if err != nil {
		return err
	}
	dstID, err := dstC.ClusterMyID(ctx).Result()
	if err != nil {
		return err
	}
	if err := dstC.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err(); err != nil {
		return fmt.Errorf("SETSLOT IMPORTING: %w", err)
	}
	if err := srcC.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err(); err != nil {
		return fmt.Errorf("SETSLOT MIGRATING: %w", err)
	}
	for {
		keys, err := srcC.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", "127.0.0.1", dst.Port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := srcC.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("MIGRATE: %w", err)
		}
	}
	for _, s := range c.Nodes {
		rdb := s.Client()
		err := rdb.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err()
		rdb.Close()
		if err != nil {
			return fmt.Errorf("SETSLOT NODE on %s: %w", s.Addr(), err)
		}
	}
	return nil
}

// Close stops every node.
func (c *Cluster) Close() {
	for _, s := range c.Nodes {
		s.Close()
	}
}
