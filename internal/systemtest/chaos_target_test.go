package systemtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// A campaign's target: the servers, each behind a valkeytest proxy that the provider goes
// through (and the faults with it), and direct clients for the campaign's own reads and
// out-of-band changes, which no fault reaches. Every server keeps an AOF written with
// appendfsync always, so a restart keeps every write it acknowledged.

type chaosMode string

const (
	chaosStandalone chaosMode = "standalone"
	chaosCluster    chaosMode = "cluster"
	// chaosReplicated is a primary with one replica, the provider (through the proxy, in front
	// of the primary only) asking for min_replica_acks = 1: every create is confirmed by WAIT.
	chaosReplicated chaosMode = "replicated"
)

// chaosAckTimeout is the provider's replica_ack_timeout in replicated mode: how long WAIT waits
// for the replica. A detached replica makes WAIT answer 0 after it, whatever the machine's speed.
const chaosAckTimeout = 300 * time.Millisecond

var chaosPersistence = valkeytest.WithArgs("--appendonly", "yes", "--appendfsync", "always")

type chaosTarget struct {
	mode     chaosMode
	proxies  []*faultproxy.Proxy
	provider func(maxRetries int) string // the provider block
	admin    func(stream string) redis.Cmdable
	slots    *chaosSlots // where each key lives (Cluster mode; nil otherwise)
	// restart restarts the server that holds stream (in a cluster, the node that owns its slot),
	// or for "" any (a node drawn from rng), and waits until it serves again.
	restart func(rng *rand.Rand, stream string) (string, error)
	// detach takes the replica off the primary (REPLICAOF NO ONE), so that no WAIT of the step
	// is acknowledged; attach links it again and waits until it holds all the primary wrote.
	// nil outside replicated mode.
	detach, attach func() error
	close          func()
}

// addrs are the addresses the provider is given, one of which every error must name.
func (tg *chaosTarget) addrs() []string {
	out := make([]string, len(tg.proxies))
	for i, p := range tg.proxies {
		out[i] = p.Addr()
	}
	return out
}

// inject gives every proxy the step's faults (a fault on a key acts where the key lives).
func (tg *chaosTarget) inject(faults ...faultproxy.Fault) {
	for _, p := range tg.proxies {
		p.Inject(faults...)
	}
}

// log is what every proxy saw since the last call, and how many faults acted on connections
// rather than commands (Refuse).
func (tg *chaosTarget) log() (records []faultproxy.Record, refused int) {
	for _, p := range tg.proxies {
		hits := p.Hits()
		log := p.Log()
		var nodes []int64 // connections a node opened (serverConn): not the provider's
		for i, r := range log {
			if serverConn(r) && !slices.ContainsFunc(log[:i], func(o faultproxy.Record) bool { return o.Conn == r.Conn }) {
				nodes = append(nodes, r.Conn)
			}
		}
		log = slices.DeleteFunc(log, func(r faultproxy.Record) bool { return slices.Contains(nodes, r.Conn) })
		for _, r := range log {
			if r.Action != 0 {
				hits--
			}
			hits -= r.Before // an event during the step (chaos_during_test.go)
		}
		records = append(records, log...)
		refused += max(hits, 0)
	}
	return records, refused
}

// providerSettings are the provider's settings in every step but max_retries: short timeouts,
// so that a fault that waits them out costs a second, not five. (No WAIT either: the runs set
// VALKEY_MIN_REPLICA_ACKS=0, since the servers have no replicas.)
func providerSettings(maxRetries int) string {
	return fmt.Sprintf("  dial_timeout    = %q\n  command_timeout = %q\n  max_retries     = %d\n",
		chaosCommandTimeout, chaosCommandTimeout, maxRetries)
}

func startChaosTarget(mode chaosMode) (*chaosTarget, error) {
	if mode == chaosCluster {
		return startChaosCluster()
	}
	srv, err := valkeytest.Start(chaosPersistence)
	if err != nil {
		return nil, err
	}
	proxy, err := faultproxy.StartProxy(srv.Addr())
	if err != nil {
		srv.Close()
		return nil, err
	}
	proxy.KeepLog()
	admin := srv.Client()
	tg := &chaosTarget{
		mode:    mode,
		proxies: []*faultproxy.Proxy{proxy},
		provider: func(maxRetries int) string {
			return fmt.Sprintf("provider \"valkey\" {\n  url             = %q\n%s}\n", proxy.URL(), providerSettings(maxRetries))
		},
		admin: func(string) redis.Cmdable { return admin },
		restart: func(rng *rand.Rand, _ string) (string, error) {
			how := restartServer(rng, srv)
			if err := srv.Restart(); err != nil {
				return how, err
			}
			return how, waitLoaded(admin)
		},
		close: func() { _ = admin.Close(); proxy.Close(); srv.Close() },
	}
	if mode == chaosReplicated {
		if err := replicate(tg, srv, admin); err != nil {
			tg.close()
			return nil, err
		}
	}
	return tg, nil
}

// replicate gives the standalone target of replicated mode its replica: the provider asks for
// one acknowledgement (min_replica_acks = 1, set in the provider block, which wins over the
// campaign's VALKEY_MIN_REPLICA_ACKS=0), a restart of the primary waits until the replica holds
// everything again, and detach and attach take it off the primary and back.
func replicate(tg *chaosTarget, primary *valkeytest.Server, admin *redis.Client) error {
	replica, err := valkeytest.StartReplica(primary)
	if err != nil {
		return err
	}
	replicaAdmin := replica.Client()
	synced := func() error {
		ctx := context.Background()
		port := strconv.Itoa(primary.Port)
		if err := replicaAdmin.ReplicaOf(ctx, "127.0.0.1", port).Err(); err != nil {
			return fmt.Errorf("REPLICAOF 127.0.0.1 %s: %w", port, err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			p, perr := valkeytest.Info(ctx, admin, "replication")
			r, rerr := valkeytest.Info(ctx, replicaAdmin, "replication")
			if perr == nil && rerr == nil && r["master_link_status"] == "up" && p["connected_slaves"] == "1" &&
				r["slave_repl_offset"] == p["master_repl_offset"] {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the replica did not catch up with the primary within 30s (primary %v, replica %v): %w", p, r, errors.Join(perr, rerr))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	provider, restart, closeAll := tg.provider, tg.restart, tg.close
	tg.provider = func(maxRetries int) string {
		return strings.Replace(provider(maxRetries), "}\n",
			fmt.Sprintf("  min_replica_acks    = 1\n  replica_ack_timeout = %q\n}\n", chaosAckTimeout), 1)
	}
	tg.restart = func(rng *rand.Rand, stream string) (string, error) {
		how, err := restart(rng, stream)
		if err == nil {
			err = synced()
		}
		return how, err
	}
	tg.detach = func() error { return replicaAdmin.ReplicaOf(context.Background(), "NO", "ONE").Err() }
	tg.attach = synced
	tg.close = func() { _ = replicaAdmin.Close(); replica.Close(); closeAll() }
	return synced()
}

// restartServer stops srv abruptly (SIGKILL) or cleanly (SHUTDOWN), and says which.
func restartServer(rng *rand.Rand, srv *valkeytest.Server) string {
	if rng.IntN(2) == 0 {
		srv.Stop()
		return "SIGKILL and restart " + srv.Addr()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	return "SHUTDOWN and restart " + srv.Addr()
}

// waitLoaded waits until the server has loaded its AOF.
func waitLoaded(rdb *redis.Client) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := valkeytest.Info(context.Background(), rdb, "persistence")
		if err == nil && info["loading"] == "0" {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("the server did not load its AOF within 30s: %w", err)
			}
			return fmt.Errorf("the server did not load its AOF within 30s (loading=%q)", info["loading"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startChaosCluster is three masters, each behind its proxy and announcing it.
func startChaosCluster() (*chaosTarget, error) {
	pc, err := faultproxy.StartProxiedCluster(3, chaosPersistence, valkeytest.WithArgs("--cluster-node-timeout", "3000"))
	if err != nil {
		return nil, err
	}
	for _, p := range pc.Proxies {
		p.KeepLog()
	}
	slots, err := newChaosSlots(pc)
	if err != nil {
		slots.close()
		pc.Close()
		return nil, err
	}
	quoted := make([]string, len(pc.Proxies))
	for i, a := range pc.ProxyAddrs() {
		quoted[i] = strconv.Quote(a)
	}
	return &chaosTarget{
		mode:    chaosCluster,
		proxies: pc.Proxies,
		provider: func(maxRetries int) string {
			return fmt.Sprintf("provider \"valkey\" {\n  cluster = {\n    addresses = [%s]\n  }\n%s}\n", strings.Join(quoted, ", "), providerSettings(maxRetries))
		},
		admin: slots.admin,
		slots: slots,
		restart: func(rng *rand.Rand, stream string) (string, error) {
			var node *valkeytest.Server
			if stream == "" {
				node = pc.Nodes[rng.IntN(len(pc.Nodes))]
			} else {
				node = slots.owner[valkey.HashSlot(stream)]
			}
			how := restartServer(rng, node)
			if err := node.Restart(); err != nil {
				return how, err
			}
			if err := waitLoaded(slots.admins[node]); err != nil {
				return how, err
			}
			return how, pc.WaitReady(30 * time.Second)
		},
		close: func() {
			slots.close()
			pc.Close()
		},
	}, nil
}

// needChaosServers skips (or fails, under VALKEYTEST_REQUIRED) when the servers are missing.
func needChaosServers(t *testing.T, mode chaosMode) {
	t.Helper()
	_ = acctest.Server(t) // valkey-server
	if mode == chaosCluster {
		valkeytest.LookPathT(t, "valkey-cli", "scripts/setup.sh valkey")
	}
}
