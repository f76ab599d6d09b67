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

// Cluster is a Valkey Cluster, each node a Server on loopback: masters, and their replicas
// when asked for.
type Cluster struct {
	Nodes []*Server
	opts  []Option // every node's, for AddNode
	// announced are the addresses nodes announce instead of their own (a proxy in front of
	// each): CLUSTER SLOTS names those.
	announced map[string]*Server
}

// Announces tells c that s announces addr (cluster-announce-port: a proxy in front of it), so
// that Owner, WaitOwner and the migrations know s where CLUSTER SLOTS names addr.
func (c *Cluster) Announces(s *Server, addr string) {
	if c.announced == nil {
		c.announced = map[string]*Server{}
	}
	c.announced[addr] = s
}

// StartCluster launches masters*(1+replicas) nodes with cluster mode on, joins them with
// `valkey-cli --cluster create` (replicas per master), and waits until every node reports
// cluster_state:ok and sees every replica. opts come after the defaults, so a WithArgs such as
// "--cluster-node-timeout 1000" overrides them.
func StartCluster(masters, replicas int, opts ...Option) (*Cluster, error) {
	c := &Cluster{opts: append([]Option{WithArgs(
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", "2000",
	)}, opts...)}
	for range masters * (1 + replicas) {
		s, err := Start(c.opts...)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	cli, err := Companion("valkey-cli")
	if err != nil {
		c.Close()
		return nil, err
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		c.Close()
		return nil, fmt.Errorf("valkey-cli --cluster create: %w\n%s", err, out)
	}
	if err := c.WaitOK(30*time.Second, masters*replicas); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// WaitOK waits until every node reports cluster_state:ok and, with replicas, lists that many
// replicas and no failed node, and CLUSTER SLOTS lists every replica.
func (c *Cluster) WaitOK(limit time.Duration, replicas int) error {
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
	if replicas == 0 {
		return nil
	}
	// CLUSTER SLOTS lists a replica only once it has synced with its primary.
	return waitFor(time.Until(deadline), func() bool {
		rdb := c.Nodes[0].Client()
		defer rdb.Close()
		ranges, _ := rdb.ClusterSlots(context.Background()).Result() //nolint:staticcheck // as in slotNodes
		listed := 0
		for _, r := range ranges {
			listed += len(r.Nodes)
		}
		return listed == len(c.Nodes) // one slot range per master, as --cluster create makes them
	})
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
	nodes, err := c.slotNodes(ctx, c.Nodes[0], slot)
	if err != nil {
		return nil, err
	}
	return nodes[0], nil
}

// Replicas are the replicas of slot's owner, as CLUSTER SLOTS on the first node reports them.
func (c *Cluster) Replicas(ctx context.Context, slot int) ([]*Server, error) {
	nodes, err := c.slotNodes(ctx, c.Nodes[0], slot)
	if err != nil {
		return nil, err
	}
	return nodes[1:], nil
}

// slotNodes is what CLUSTER SLOTS on asked says serves slot: its owner, then the owner's
// replicas.
func (c *Cluster) slotNodes(ctx context.Context, asked *Server, slot int) ([]*Server, error) {
	rdb := asked.Client()
	defer rdb.Close()
	ranges, err := rdb.ClusterSlots(ctx).Result() //nolint:staticcheck // CLUSTER SLOTS answers the slot-to-node map the test needs on every Valkey version
	if err != nil {
		return nil, err
	}
	for _, r := range ranges {
		if r.Start > slot || slot > r.End {
			continue
		}
		var nodes []*Server
		for _, n := range r.Nodes {
			if s := c.named(n.Addr); s != nil {
				nodes = append(nodes, s)
			}
		}
		if len(nodes) > 0 && nodes[0] == c.named(r.Nodes[0].Addr) {
			return nodes, nil
		}
	}
	return nil, fmt.Errorf("slot %d has no owner among %v", slot, c.Addrs())
}

// named is the node at addr, its own or the one it announces; nil for none.
func (c *Cluster) named(addr string) *Server {
	for _, s := range c.Nodes {
		if s.Addr() == addr {
			return s
		}
	}
	return c.announced[addr]
}

// Close stops every node.
func (c *Cluster) Close() {
	for _, s := range c.Nodes {
		s.Close()
	}
}
