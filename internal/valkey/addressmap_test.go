package valkey_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestAddressMap_ReachesNodesThatAnnounceUnreachableAddresses: the nodes of a cluster announce
// ports nothing listens on (as private addresses are, seen from a CI runner), and each is
// reached only through a forwarder on another port. With the map from announced to forwarded
// addresses, creates on every master succeed; without it, the client cannot connect.
func TestAddressMap_ReachesNodesThatAnnounceUnreachableAddresses(t *testing.T) {
	t.Parallel()
	cluster := valkeytest.StartClusterT(t, 3, 0)
	ctx := context.Background()
	addressMap := map[string]string{}
	var announced []string
	for _, node := range cluster.Nodes {
		fake, err := valkeytest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(fake))
		addressMap[addr] = faultproxy.StartProxyT(t, node.Addr()).Addr()
		announced = append(announced, addr)
	}
	cluster.AnnounceT(t, announced)

	stream := func(i int) string { return valkeytest.Key(t, fmt.Sprintf("test:{%%s-%d}:stream", i)) }
	c := newClient(t, valkey.Options{ClusterAddrs: announced[:1], AddressMap: addressMap, MinReplicaAcks: new(0)})
	for i := range 12 { // twelve hash tags: every master owns some of them
		if _, _, err := c.EnsureGroup(ctx, stream(i), "g", valkey.StartNew); err != nil {
			t.Fatalf("through the map: %v", err)
		}
	}
	without := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs()[:1], MinReplicaAcks: new(0), MaxRetries: new(0)})
	if _, _, err := without.EnsureGroup(ctx, stream(99), "g", valkey.StartNew); err == nil {
		t.Error("without the map, a node at an announced address was reached: the test proves nothing")
	}
}

// dialCounter counts the dials that reach the network, per node: it sits inside the client's
// own hooks, so a dial the client answers from memory never reaches it.
type dialCounter struct {
	mu    sync.Mutex
	dials map[string]int
}

func (d *dialCounter) hook(node string) redis.Hook { return dialCount{d, node} }

func (d *dialCounter) count(node string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials[node]
}

type dialCount struct {
	*dialCounter
	node string
}

func (h dialCount) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.mu.Lock()
		h.dials[h.node]++
		h.mu.Unlock()
		return next(ctx, network, addr)
	}
}

func (dialCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (dialCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestAddressMap_AnnouncedNodesThatNeverAnswerAreDialledOnce: the seed answers, and the nodes
// announce addresses where a connect hangs (private addresses seen from outside). The first
// dial to such a node waits out dial_timeout and fails naming the announced node; every later
// command for it, go-redis's own retries and EnsureGroup's included, fails with that answer
// without dialling again, so a plan or an apply learns it in one dial_timeout, not minutes.
func TestAddressMap_AnnouncedNodesThatNeverAnswerAreDialledOnce(t *testing.T) {
	t.Parallel()
	cluster := valkeytest.StartClusterT(t, 3, 0)
	ctx := context.Background()
	announced := cluster.AnnounceBlackholesT(t)
	seed := cluster.Addrs()[0]
	c := newClient(t, valkey.Options{ClusterAddrs: []string{seed}, DialTimeout: 300 * time.Millisecond, MinReplicaAcks: new(0)})
	counter := &dialCounter{dials: map[string]int{}}
	cc, _ := c.Universal().(*redis.ClusterClient)
	cc.OnNewNode(func(node *redis.Client) { node.AddHook(counter.hook(node.Options().Addr)) })

	stream := valkeytest.Key(t, "test:{%s}:stream")
	_, surveyErr := c.Survey(ctx, stream)
	_, _, ensureErr := c.EnsureGroup(ctx, stream, "g", valkey.StartNew)
	var node string
	for name, err := range map[string]error{"Survey": surveyErr, "EnsureGroup": ensureErr} {
		var unreachable *valkey.UnreachableError
		switch {
		case !errors.As(err, &unreachable):
			t.Fatalf("%s: %T %v; want an *UnreachableError", name, err, err)
		case !unreachable.Announced || !slices.Contains(announced, unreachable.Node) || unreachable.Step != "connect" ||
			unreachable.Cause() != valkey.CauseTimeout:
			t.Errorf("%s: %+v; want a connect to an announced node (%v) that timed out", name, unreachable, announced)
		}
		if node == "" {
			node = unreachable.Node
		} else if unreachable.Node != node {
			t.Errorf("%s failed at %s, Survey at %s: one stream, one node", name, unreachable.Node, node)
		}
	}
	if n := counter.count(node); n != 1 {
		t.Errorf("node %s was dialled %d times; once is enough to know it never answers", node, n)
	}
	if n := counter.count(seed); n == 0 {
		t.Errorf("the seed %s was never dialled: the test did not reach the announced nodes through it", seed)
	}
}
