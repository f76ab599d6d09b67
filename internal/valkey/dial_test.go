package valkey_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/socks5test"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// userConns are the peer addresses of s's connections of user.
func userConns(t *testing.T, s *valkeytest.Server, user string) []string {
	t.Helper()
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	list, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		fields := map[string]string{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		if fields["user"] == user {
			addrs = append(addrs, fields["addr"])
		}
	}
	return addrs
}

// allThroughProxy checks that user has connections on the servers, and that each one is the
// proxy's: its peer address is one the proxy dialled from.
func allThroughProxy(t *testing.T, p *socks5test.Proxy, user string, servers ...*valkeytest.Server) {
	t.Helper()
	var local []string
	for _, c := range p.Conns() {
		local = append(local, c.Local)
	}
	total := 0
	for _, s := range servers {
		for _, addr := range userConns(t, s, user) {
			total++
			if !slices.Contains(local, addr) {
				t.Errorf("connection from %s to %s went around the proxy (the proxy dialled from %v)", addr, s.Addr(), local)
			}
		}
	}
	if total == 0 {
		t.Errorf("user %s has no connection on %d servers", user, len(servers))
	}
}

// TestProxy_CarriesASingleServer: every connection goes through the SOCKS5 proxy, with its user
// and password, and the host name is sent to the proxy unresolved (socks5h semantics).
func TestProxy_CarriesASingleServer(t *testing.T) {
	t.Parallel()
	s := valkeytest.StartT(t)
	user, password := s.ACLUser(t, "*", "+@all")
	p := socks5test.StartT(t, "tunnel", "s3cret")
	named := net.JoinHostPort("localhost", strconv.Itoa(s.Port))
	c := newClient(t, valkey.Options{URL: "valkey://" + named, Username: user, Password: password,
		Proxy: "socks5://tunnel:s3cret@" + p.Addr})
	stream := key(t, "stream")
	for i := range 3 {
		if _, _, err := c.EnsureGroup(context.Background(), stream, fmt.Sprintf("g%d", i), valkey.StartNew); err != nil {
			t.Fatal(err)
		}
	}
	allThroughProxy(t, p, user, s)
	if conns := p.Conns(); len(conns) == 0 || conns[0].Target != named {
		t.Errorf("the proxy was asked for %v, want %s: the name resolved by the proxy", conns, named)
	}

	wrong := newClient(t, valkey.Options{URL: "valkey://" + named, Username: user, Password: password,
		Proxy: "socks5://tunnel:wrong@" + p.Addr, MaxRetries: new(0)})
	_, _, err := wrong.EnsureGroup(context.Background(), stream, "refused", valkey.StartNew)
	var u *valkey.UnreachableError
	if !errors.As(err, &u) || u.Step != "connect" {
		t.Errorf("with a wrong proxy password: %v, want a failure to connect", err)
	}
}

// TestProxy_CarriesEveryClusterNode: the seeds and every node CLUSTER SLOTS names are dialled
// through the proxy.
func TestProxy_CarriesEveryClusterNode(t *testing.T) {
	t.Parallel()
	cluster := valkeytest.StartClusterT(t, 3, 0)
	user, password := cluster.ACLUser(t, "*", "+@all")
	p := socks5test.StartT(t, "", "")
	c := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs()[:1], Username: user, Password: password,
		Proxy: "socks5h://" + p.Addr, MinReplicaAcks: new(0)})
	// One stream on each master, the server saying which slot a key hashes to (random key
	// names alone left a master without one about once in 40 runs).
	ctx, admin := context.Background(), cluster.Nodes[0].Client()
	defer func() { _ = admin.Close() }()
	owned := map[*valkeytest.Server]bool{}
	for i := 0; len(owned) < len(cluster.Nodes); i++ {
		if i == 200 {
			t.Fatalf("200 keys hashed to only %d of %d masters", len(owned), len(cluster.Nodes))
		}
		stream := valkeytest.Key(t, fmt.Sprintf("test:{%%s-%d}:stream", i))
		slot, err := admin.ClusterKeySlot(ctx, stream).Result()
		if err != nil {
			t.Fatal(err)
		}
		owner, err := cluster.Owner(ctx, int(slot))
		if err != nil {
			t.Fatal(err)
		}
		if owned[owner] {
			continue
		}
		owned[owner] = true
		if _, _, err := c.EnsureGroup(ctx, stream, "g", valkey.StartNew); err != nil {
			t.Fatal(err)
		}
	}
	allThroughProxy(t, p, user, cluster.Nodes...)
	for _, node := range cluster.Nodes {
		if len(userConns(t, node, user)) == 0 {
			t.Errorf("node %s was never reached", node.Addr())
		}
	}
}

// TestProxy_AddressMapIsAppliedBeforeTheProxyDial: with both a proxy and an address map, the map
// turns each announced address into its mapped one first, and the proxy is asked to dial the
// mapped address, from where the proxy runs. The nodes announce ports nothing listens on; the
// proxy is never asked for one of them, and every node is reached at its mapped address.
func TestProxy_AddressMapIsAppliedBeforeTheProxyDial(t *testing.T) {
	t.Parallel()
	cluster := valkeytest.StartClusterT(t, 3, 0)
	addressMap, mapped := map[string]string{}, map[string]bool{}
	var announced []string
	for _, node := range cluster.Nodes {
		fake, err := valkeytest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(fake))
		addressMap[addr], mapped[node.Addr()] = node.Addr(), true
		announced = append(announced, addr)
	}
	cluster.AnnounceT(t, announced)
	p := socks5test.StartT(t, "", "")
	c := newClient(t, valkey.Options{ClusterAddrs: announced[:1], AddressMap: addressMap, Proxy: "socks5://" + p.Addr,
		MinReplicaAcks: new(0)})
	ctx := context.Background()
	for i := range 12 { // twelve hash tags: every master owns some of them
		if _, _, err := c.EnsureGroup(ctx, valkeytest.Key(t, fmt.Sprintf("test:{%%s-%d}:stream", i)), "g", valkey.StartNew); err != nil {
			t.Fatal(err)
		}
	}
	asked := map[string]bool{}
	for _, conn := range p.Conns() {
		asked[conn.Target] = true
		if !mapped[conn.Target] {
			t.Errorf("the proxy was asked to dial %s, not a mapped address (announced: %v)", conn.Target, announced)
		}
	}
	for addr := range mapped {
		if !asked[addr] {
			t.Errorf("the proxy was never asked for the mapped address %s (asked: %v)", addr, asked)
		}
	}
}

// TestProxy_CarriesSentinelsAndThePrimary: the sentinels asked for the primary, and the primary,
// are dialled through the proxy.
func TestProxy_CarriesSentinelsAndThePrimary(t *testing.T) {
	t.Parallel()
	st := valkeytest.StartSentinelT(t, 1)
	user, password := st.Primary.ACLUser(t, "*", "+@all")
	p := socks5test.StartT(t, "", "")
	c := newClient(t, valkey.Options{Username: user, Password: password, Proxy: "socks5://" + p.Addr, MinReplicaAcks: new(0),
		Sentinel: &valkey.SentinelOptions{MasterName: st.MasterName, Addrs: st.Addrs()}})
	if _, _, err := c.EnsureGroup(context.Background(), key(t, "stream"), "g", valkey.StartNew); err != nil {
		t.Fatal(err)
	}
	allThroughProxy(t, p, user, st.Primary)
	var targets []string
	for _, conn := range p.Conns() {
		targets = append(targets, conn.Target)
	}
	if !slices.Contains(targets, st.Addrs()[0]) {
		t.Errorf("the proxy carried %v, not the sentinel %s", targets, st.Addrs()[0])
	}
}

// TestProxy_RefusesWhatIsNotSOCKS5: a proxy setting that is not socks5://host:port is refused
// when the client is made, without repeating its password.
func TestProxy_RefusesWhatIsNotSOCKS5(t *testing.T) {
	for _, raw := range []string{"http://u:hunter2@proxy:3128", "socks5://u:hunter2@proxy", "socks5://", "proxy:1080"} {
		_, err := valkey.NewClient(valkey.Options{Proxy: raw})
		var optionErr *valkey.OptionError
		if !errors.As(err, &optionErr) || optionErr.Field != "Proxy" {
			t.Errorf("%s: %v, want an OptionError on Proxy", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error %q repeats the password", raw, err)
		}
	}
}
