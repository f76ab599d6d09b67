package valkeytest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sentinel is a primary, one replica, and sentinels watching them under MasterName.
type Sentinel struct {
	MasterName string
	Primary    *Server // the primary at start; after a failover it is a replica
	Replica    *Server
	Sentinels  []*Server
}

// StartSentinel launches a primary, a replica of it, and n sentinels with quorum 1 and
// down-after-milliseconds 1000, and waits until the sentinels see the replica.
func StartSentinel(n int) (*Sentinel, error) {
	bin, err := Companion("valkey-sentinel")
	if err != nil {
		return nil, err
	}
	st := &Sentinel{MasterName: "primary"}
	if st.Primary, err = Start(); err != nil {
		return nil, err
	}
	if st.Replica, err = StartReplica(st.Primary); err != nil {
		st.Close()
		return nil, err
	}
	for range n {
		s, err := Start(WithBinary(bin), withConfig(fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 1\n"+
			"sentinel down-after-milliseconds %[1]s 1000\n"+
			"sentinel failover-timeout %[1]s 10000\n", st.MasterName, st.Primary.Port)))
		if err != nil {
			st.Close()
			return nil, err
		}
		st.Sentinels = append(st.Sentinels, s)
	}
	if err := waitFor(10*time.Second, func() bool {
		rdb := st.SentinelClient()
		defer func() { _ = rdb.Close() }()
		replicas, _ := rdb.Replicas(context.Background(), st.MasterName).Result()
		// Promotable only once the sentinel is connected to it and has its INFO.
		return len(replicas) > 0 && replicas[0]["flags"] == "slave" && replicas[0]["master-link-status"] == "ok"
	}); err != nil {
		st.Close()
		return nil, fmt.Errorf("sentinel never saw a healthy replica: %w", err)
	}
	return st, nil
}

// StartReplica starts a replica of primary and waits until its link to the primary is up.
func StartReplica(primary *Server, opts ...Option) (*Server, error) {
	s, err := Start(append([]Option{WithArgs("--replicaof", "127.0.0.1", strconv.Itoa(primary.Port))}, opts...)...)
	if err != nil {
		return nil, err
	}
	if err := waitFor(10*time.Second, func() bool { return s.info("replication")["master_link_status"] == "up" }); err != nil {
		s.Close()
		return nil, fmt.Errorf("replica never linked to the primary: %w", err)
	}
	return s, nil
}

func waitFor(limit time.Duration, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// Addrs lists the sentinels' host:port.
func (st *Sentinel) Addrs() []string {
	addrs := make([]string, len(st.Sentinels))
	for i, s := range st.Sentinels {
		addrs[i] = s.Addr()
	}
	return addrs
}

// SentinelClient talks to the first sentinel; the caller closes it.
func (st *Sentinel) SentinelClient() *redis.SentinelClient { return sentinelClient(st.Sentinels[0]) }

func sentinelClient(s *Server) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true})
}

// Failover runs SENTINEL FAILOVER and waits until the replica is the primary and every
// sentinel says so (the others learn it from the first one's hello messages). The old primary
// is reconfigured as a replica some seconds later.
func (st *Sentinel) Failover(ctx context.Context) error {
	rdb := st.SentinelClient()
	defer func() { _ = rdb.Close() }()
	if err := rdb.Failover(ctx, st.MasterName).Err(); err != nil {
		return fmt.Errorf("SENTINEL FAILOVER: %w", err)
	}
	return waitFor(15*time.Second, func() bool {
		for _, s := range st.Sentinels {
			c := sentinelClient(s)
			hp, err := c.GetMasterAddrByName(ctx, st.MasterName).Result()
			_ = c.Close()
			if err != nil || net.JoinHostPort(hp[0], hp[1]) != st.Replica.Addr() {
				return false
			}
		}
		return st.Replica.info("replication")["role"] == "master"
	})
}

// WaitReplicated waits until the promoted primary has a replica with its link up again (the
// old primary, reconfigured by the sentinels), as writes confirmed by a replica need.
func (st *Sentinel) WaitReplicated(ctx context.Context) error {
	return waitFor(30*time.Second, func() bool {
		info := st.Replica.info("replication")
		return info["role"] == "master" && strings.Contains(info["slave0"], "state=online")
	})
}

// Close stops every process.
func (st *Sentinel) Close() {
	for _, s := range st.Sentinels {
		s.Close()
	}
	if st.Replica != nil {
		st.Replica.Close()
	}
	if st.Primary != nil {
		st.Primary.Close()
	}
}
