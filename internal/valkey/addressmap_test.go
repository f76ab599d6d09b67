package valkey_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

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
		forward := faultproxy.StartProxyT(t, node.Addr())
		rdb := node.Client()
		err = rdb.ConfigSet(ctx, "cluster-announce-bus-port", strconv.Itoa(node.Port+10000)).Err()
		if err == nil {
			err = rdb.ConfigSet(ctx, "cluster-announce-port", strconv.Itoa(fake)).Err()
		}
		_ = rdb.Close()
		if err != nil {
			t.Fatal(err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(fake))
		addressMap[addr] = forward.Addr()
		announced = append(announced, addr)
	}
	waitAnnounced(t, cluster, announced)

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

// waitAnnounced waits until every node's CLUSTER SLOTS names only the announced addresses.
func waitAnnounced(t *testing.T, cluster *valkeytest.Cluster, announced []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok := true
		for _, node := range cluster.Nodes {
			rdb := node.Client()
			slots, err := rdb.ClusterSlots(context.Background()).Result() //nolint:staticcheck // the map go-redis reads
			_ = rdb.Close()
			if err != nil {
				ok = false
				break
			}
			for _, s := range slots {
				for _, n := range s.Nodes {
					if !strings.Contains(strings.Join(announced, " "), n.Addr) {
						ok = false
					}
				}
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the nodes do not announce the addresses set")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
