package valkeytest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Migration is a slot on its way from Source to Target, moved the way valkey-cli's reshard
// moves it: the target IMPORTING, the source MIGRATING, the keys MIGRATEd (those of every
// database), then SETSLOT NODE on every primary. Between BeginMigration and Finish the source
// serves the keys it still holds and answers ASK for the others (moved, or not created yet),
// and the target serves those only after ASKING.
type Migration struct {
	Slot           int
	Source, Target *Server
	cluster        *Cluster
	targetID       string
}

// BeginMigration marks slot IMPORTING on dst and MIGRATING on its owner, and moves no key.
func (c *Cluster) BeginMigration(ctx context.Context, slot int, dst *Server) (*Migration, error) {
	src, err := c.Owner(ctx, slot)
	if err != nil {
		return nil, err
	}
	if src == dst {
		return nil, fmt.Errorf("slot %d already lives on %s", slot, dst.Addr())
	}
	srcID, err := nodeID(ctx, src)
	if err != nil {
		return nil, err
	}
	dstID, err := nodeID(ctx, dst)
	if err != nil {
		return nil, err
	}
	if err := do(ctx, dst, 0, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID); err != nil {
		return nil, fmt.Errorf("SETSLOT IMPORTING: %w", err)
	}
	if err := do(ctx, src, 0, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID); err != nil {
		return nil, fmt.Errorf("SETSLOT MIGRATING: %w", err)
	}
	return &Migration{Slot: slot, Source: src, Target: dst, cluster: c, targetID: dstID}, nil
}

// Move migrates keys of database db from the source to the target now.
func (m *Migration) Move(ctx context.Context, db int, keys ...string) error {
	args := []any{"MIGRATE", "127.0.0.1", m.Target.Port, "", db, 5000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	if err := do(ctx, m.Source, db, args...); err != nil {
		return fmt.Errorf("MIGRATE %v from database %d: %w", keys, db, err)
	}
	return nil
}

// StopImporting makes the target forget that it imports the slot (CLUSTER SETSLOT STABLE) while
// the source still migrates it: the source answers ASK for the keys it moved, and the target
// answers MOVED back, so a command on them bounces between the two until ResumeImporting. A
// reshard passes through such moments when its SETSLOT commands reach the nodes out of order.
func (m *Migration) StopImporting(ctx context.Context) error {
	return do(ctx, m.Target, 0, "CLUSTER", "SETSLOT", m.Slot, "STABLE")
}

// ResumeImporting marks the slot IMPORTING on the target again: the half-way state, in which
// the target serves the moved keys after ASKING.
func (m *Migration) ResumeImporting(ctx context.Context) error {
	srcID, err := nodeID(ctx, m.Source)
	if err != nil {
		return err
	}
	return do(ctx, m.Target, 0, "CLUSTER", "SETSLOT", m.Slot, "IMPORTING", srcID)
}

// Finish moves every key left in the slot, in every database, and gives the slot to the target
// on every primary.
func (m *Migration) Finish(ctx context.Context) error {
	dbs, err := Databases(ctx, m.Source)
	if err != nil {
		return err
	}
	for db := range dbs {
		rdb := dbClient(m.Source, db)
		for {
			keys, err := rdb.ClusterGetKeysInSlot(ctx, m.Slot, 100).Result()
			if err == nil && len(keys) > 0 {
				err = m.Move(ctx, db, keys...)
			}
			if err != nil || len(keys) == 0 {
				_ = rdb.Close()
				if err != nil {
					return err
				}
				break
			}
		}
	}
	for _, s := range m.cluster.Nodes {
		if !isPrimary(ctx, s) {
			continue // replicas take it from their primaries, and a stopped node answers nothing
		}
		if err := do(ctx, s, 0, "CLUSTER", "SETSLOT", m.Slot, "NODE", m.targetID); err != nil {
			return fmt.Errorf("SETSLOT NODE on %s: %w", s.Addr(), err)
		}
	}
	return nil
}

// MigrateSlot moves slot, with its keys, from its owner to dst (BeginMigration, then Finish).
func (c *Cluster) MigrateSlot(ctx context.Context, slot int, dst *Server) error {
	m, err := c.BeginMigration(ctx, slot, dst)
	if err != nil {
		return err
	}
	return m.Finish(ctx)
}

// MigrateSlotAtomically starts Valkey 9's atomic slot migration of slot to dst
// (CLUSTER MIGRATESLOTS) and returns once the source has accepted it; the source keeps serving
// the slot until the handover. WaitOwner waits for its end.
func (c *Cluster) MigrateSlotAtomically(ctx context.Context, slot int, dst *Server) error {
	src, err := c.Owner(ctx, slot)
	if err != nil {
		return err
	}
	dstID, err := nodeID(ctx, dst)
	if err != nil {
		return err
	}
	if err := do(ctx, src, 0, "CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", slot, slot, "NODE", dstID); err != nil {
		return fmt.Errorf("CLUSTER MIGRATESLOTS on %s: %w", src.Addr(), err)
	}
	return nil
}

// WaitOwner waits until every node's CLUSTER SLOTS says dst serves slot.
func (c *Cluster) WaitOwner(ctx context.Context, slot int, dst *Server, limit time.Duration) error {
	return waitFor(limit, func() bool {
		for _, s := range c.Nodes {
			if nodes, err := c.slotNodes(ctx, s, slot); err != nil || nodes[0] != dst {
				return false
			}
		}
		return true
	})
}

// AddNode starts one more master with the cluster's options, owning no slot, and waits until
// every node knows it and it sees the whole cluster.
func (c *Cluster) AddNode(ctx context.Context) (*Server, error) {
	s, err := Start(c.opts...)
	if err != nil {
		return nil, err
	}
	if err := do(ctx, c.Nodes[0], 0, "CLUSTER", "MEET", "127.0.0.1", s.Port); err != nil {
		s.Close()
		return nil, fmt.Errorf("CLUSTER MEET: %w", err)
	}
	c.Nodes = append(c.Nodes, s)
	id, err := nodeID(ctx, s)
	if err != nil {
		return nil, err
	}
	knows := func(n *Server) bool {
		rdb := n.Client()
		defer func() { _ = rdb.Close() }()
		nodes, _ := rdb.ClusterNodes(ctx).Result()
		for line := range strings.Lines(nodes) {
			if fields := strings.Fields(line); len(fields) > 2 && fields[0] == id {
				return !strings.Contains(fields[2], "handshake")
			}
		}
		return false
	}
	if err := waitFor(20*time.Second, func() bool {
		for _, n := range c.Nodes {
			if !knows(n) {
				return false
			}
		}
		rdb := s.Client()
		defer func() { _ = rdb.Close() }()
		return strings.Contains(rdb.ClusterInfo(ctx).Val(), "cluster_state:ok")
	}); err != nil {
		return nil, fmt.Errorf("the cluster never met %s: %w", s.Addr(), err)
	}
	return s, nil
}

// Databases is how many databases a node serves in Cluster mode: cluster-databases on
// Valkey 9, else 1.
func Databases(ctx context.Context, s *Server) (int, error) {
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	conf, err := rdb.ConfigGet(ctx, "cluster-databases").Result()
	if err != nil {
		return 0, err
	}
	if n, set := conf["cluster-databases"]; set {
		return strconv.Atoi(n)
	}
	return 1, nil
}

// ClientDB is Client on database db, for assertions; the caller closes it.
func (s *Server) ClientDB(db int) *redis.Client { return dbClient(s, db) }

func dbClient(s *Server, db int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), DB: db, Protocol: 2, DisableIdentity: true})
}

// isPrimary tells whether s answers and is a primary.
func isPrimary(ctx context.Context, s *Server) bool {
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	info, _ := Info(ctx, rdb, "replication")
	return info["role"] == "master"
}

func nodeID(ctx context.Context, s *Server) (string, error) {
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	return rdb.ClusterMyID(ctx).Result()
}

// do runs one command on s in database db.
func do(ctx context.Context, s *Server, db int, args ...any) error {
	rdb := dbClient(s, db)
	defer func() { _ = rdb.Close() }()
	return rdb.Do(ctx, args...).Err()
}

// Groups is what XINFO GROUPS says of stream in database db of s, asked directly and after
// ASKING, so that the target of a migration serves a key of the slot it imports; nil when s
// does not hold stream, empty when it holds it without groups. A node that does not serve the slot answers MOVED, and fails the test.
func (s *Server) Groups(tb testing.TB, db int, stream string) []string {
	tb.Helper()
	ctx := context.Background()
	rdb := dbClient(s, db)
	defer func() { _ = rdb.Close() }()
	conn := rdb.Conn()
	defer func() { _ = conn.Close() }()
	var groups *redis.XInfoGroupsCmd
	_, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "ASKING")
		groups = p.XInfoGroups(ctx, stream)
		return nil
	})
	if groupsErr := groups.Err(); groupsErr != nil && strings.HasPrefix(groupsErr.Error(), "ERR no such key") {
		return nil
	}
	if err != nil {
		tb.Fatalf("XINFO GROUPS %s in database %d of %s: %v", stream, db, s.Addr(), err)
	}
	names := []string{} // the stream is there, with or without groups
	for _, g := range groups.Val() {
		names = append(names, g.Name)
	}
	return names
}
