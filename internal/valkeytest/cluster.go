package valkeytest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Valkey Cluster of masters only, each node a Server on loopback.
type Cluster struct {
	Nodes []*Server
}

// StartCluster launches masters*(1+replicas) nodes with cluster mode on, joins them with
// `valkey-cli --cluster create` (replicas per master), and waits until every node reports
// cluster_state:ok and sees every replica. opts come after the defaults, so a WithArgs such as
// "--cluster-node-timeout 1000" overrides them.
func StartCluster(masters, replicas int, opts ...Option) (*Cluster, error) {
	c := &Cluster{}
	for range masters * (1 + replicas) {
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
	}
	cli, err := exec.LookPath("valkey-cli")
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("valkey-cli not found: run scripts/setup.sh")
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		c.Close()
		return nil, fmt.Errorf("valkey-cli --cluster create: %w\n%s", err, out)
	}
	if err := c.waitOK(30*time.Second, masters*replicas); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// waitOK waits until every node reports cluster_state:ok and, with replicas, lists that many
// replicas and no failed node.
func (c *Cluster) waitOK(limit time.Duration, replicas int) error {
	deadline := time.Now().Add(limit)
	for _, s := range c.Nodes {
		rdb := s.Client()
		for {
			info, _ := rdb.ClusterInfo(context.Background()).Result()
			nodes := ""
			if replicas > 0 {
				nodes, _ = rdb.ClusterNodes(context.Background()).Result()
			}
			if strings.Contains(info, "cluster_state:ok") &&
				(replicas == 0 || strings.Count(nodes, "slave") == replicas && !strings.Contains(nodes, "fail")) {
				break
			}
			if time.Now().After(deadline) {
				rdb.Close()
				return fmt.Errorf("node %s not ready within %v: %q\n%s", s.Addr(), limit, info, nodes)
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
