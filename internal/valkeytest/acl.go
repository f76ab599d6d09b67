package valkeytest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// EnsureGroupACL is what EnsureGroup and refresh need: XGROUP CREATE, its XINFO GROUPS
// read-back, and TYPE to name what a key holds.
const EnsureGroupACL = "+xgroup|create +xinfo|groups +type"

// MinimalACL is the permission set the provider documents for a single server: EnsureGroup's, and
// XINFO STREAM for the plan's replay and skip warnings.
const MinimalACL = EnsureGroupACL + " +xinfo|stream"

// ReplicaAckACL is MinimalACL with WAIT, which EnsureGroup sends when it waits for replicas
// (min_replica_acks, on by default with Sentinel).
const ReplicaAckACL = MinimalACL + " +wait"

// TagPattern is an ACL key pattern matching every key that starts like key up to the end of
// its hash tag, such as "emq:{orders}*": the keys a test made under its own prefix.
func TagPattern(key string) string { return key[:strings.Index(key, "}")+1] + "*" }

// ACLUser creates an ACL user on s limited to keys matching keyPattern, with perms (for
// example "+xgroup|create +type") and a random password, and deletes it when the test ends.
func (s *Server) ACLUser(t testing.TB, keyPattern, perms string) (name, password string) {
	t.Helper()
	password = fmt.Sprintf("pw-%d", rand.Uint64())
	return s.ACLUserWithPassword(t, password, keyPattern, perms), password
}

// ACLUserWithPassword is ACLUser with the password given.
func (s *Server) ACLUserWithPassword(t testing.TB, password, keyPattern, perms string) (name string) {
	t.Helper()
	name = fmt.Sprintf("u%d", rand.Uint32())
	s.setACLUser(t, name, password, keyPattern, perms)
	return name
}

// ACLUser is Server.ACLUser on every node of c, with the same name and password: ACL users
// are per node.
func (c *Cluster) ACLUser(t testing.TB, keyPattern, perms string) (name, password string) {
	t.Helper()
	name, password = fmt.Sprintf("u%d", rand.Uint32()), fmt.Sprintf("pw-%d", rand.Uint64())
	for _, s := range c.Nodes {
		s.setACLUser(t, name, password, keyPattern, perms)
	}
	return name, password
}

// setACLUser creates user name on s, and deletes it when the test ends.
func (s *Server) setACLUser(t testing.TB, name, password, keyPattern, perms string) {
	t.Helper()
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	args := []any{"ACL", "SETUSER", name, "reset", "on", ">" + password, "~" + keyPattern, "resetchannels"}
	for _, p := range strings.Fields(perms) {
		args = append(args, p)
	}
	if err := rdb.Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() {
		rdb := s.Client()
		defer func() { _ = rdb.Close() }()
		rdb.Do(context.Background(), "ACL", "DELUSER", name)
	})
}

// ACLDenials are the entries of s's ACL LOG (all it keeps) for user: the commands, keys and
// authentications the server refused it.
func (s *Server) ACLDenials(tb testing.TB, user string) []*redis.ACLLogEntry {
	tb.Helper()
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	entries, err := rdb.ACLLog(context.Background(), 1024).Result()
	if err != nil {
		tb.Fatalf("ACL LOG: %v", err)
	}
	var denials []*redis.ACLLogEntry
	for _, e := range entries {
		if e.Username == user {
			denials = append(denials, e)
		}
	}
	return denials
}

// ACLSetUser runs line, an ACL SETUSER command as the documentation writes it (such as
// "ACL SETUSER terraform on >PASSWORD ~emq:* -@all +type"), on s: each field is one argument,
// the user (the third field) is renamed to one unique to the test and ">PASSWORD" becomes a
// random password. It returns both, and deletes the user when the test ends.
func (s *Server) ACLSetUser(tb testing.TB, line string) (name, password string) {
	tb.Helper()
	name, password = fmt.Sprintf("u%d", rand.Uint32()), fmt.Sprintf("pw-%d", rand.Uint64())
	s.runACLLine(tb, line, name, password)
	return name, password
}

// ACLSetUser is Server.ACLSetUser on every node of c, with the same name and password.
func (c *Cluster) ACLSetUser(tb testing.TB, line string) (name, password string) {
	tb.Helper()
	name, password = fmt.Sprintf("u%d", rand.Uint32()), fmt.Sprintf("pw-%d", rand.Uint64())
	for _, s := range c.Nodes {
		s.runACLLine(tb, line, name, password)
	}
	return name, password
}

// runACLLine runs line on s as user name with password; see ACLSetUser.
func (s *Server) runACLLine(tb testing.TB, line, name, password string) {
	tb.Helper()
	fields := strings.Fields(line)
	if len(fields) < 3 || !strings.EqualFold(fields[0], "ACL") || !strings.EqualFold(fields[1], "SETUSER") {
		tb.Fatalf("%q is not an ACL SETUSER line", line)
	}
	args := []any{"ACL", "SETUSER", name}
	for _, f := range fields[3:] {
		if f == ">PASSWORD" {
			f = ">" + password
		}
		args = append(args, f)
	}
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	if err := rdb.Do(context.Background(), args...).Err(); err != nil {
		tb.Fatalf("%v: %v", args[:3], err)
	}
	tb.Cleanup(func() {
		rdb := s.Client()
		defer func() { _ = rdb.Close() }()
		rdb.Do(context.Background(), "ACL", "DELUSER", name)
	})
}

// ACLSetUserNamed runs line on s as it is, user name and password included (the same user
// on another server), and deletes the user when the test ends.
func (s *Server) ACLSetUserNamed(tb testing.TB, line string) {
	tb.Helper()
	fields := strings.Fields(line)
	if len(fields) < 3 {
		tb.Fatalf("%q is not an ACL SETUSER line", line)
	}
	s.runACLLine(tb, line, fields[2], "")
}
