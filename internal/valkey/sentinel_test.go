package valkey_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestClient_SentinelFollowsFailover creates a group through Sentinel, fails the primary over
// to its replica, and creates another: the second must land on the new primary.
func TestClient_SentinelFollowsFailover(t *testing.T) {
	t.Parallel()
	start := time.Now()
	st := valkeytest.StartSentinelT(t, 2)
	ctx := context.Background()
	stream := key(t, "stream")
	// No replica acknowledgements: right after the failover the new primary has no replica yet,
	// and this test is about following the primary (TestEnsureGroup_MinReplicaAcks is about WAIT).
	opts := valkey.Options{Sentinel: &valkey.SentinelOptions{MasterName: st.MasterName, Addrs: st.Addrs()}, MinReplicaAcks: new(0)}
	c := newClient(t, opts)
	if !strings.Contains(c.Addr(), st.MasterName) || !strings.Contains(c.Addr(), st.Sentinels[0].Addr()) {
		t.Errorf("Addr() = %q, want the master name and the sentinels", c.Addr())
	}
	if _, _, err := c.EnsureGroup(ctx, stream, "before", valkey.StartNew); err != nil {
		t.Fatalf("EnsureGroup through sentinel: %v", err)
	}
	primary := st.Primary.Client()
	defer primary.Close()
	if groups := serverGroups(t, primary, stream); len(groups) != 1 {
		t.Fatalf("primary groups = %+v", groups)
	}

	// The create asked no replica to acknowledge it: wait until the replica holds it, or a
	// failover on a loaded machine can promote a replica that never got it.
	replica := st.Replica.Client()
	defer replica.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if groups, err := replica.XInfoGroups(ctx, stream).Result(); err == nil && len(groups) == 1 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the replica never got group \"before\": %+v, %v", groups, err)
		}
	}

	failoverStart := time.Now()
	if err := st.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("setup %v, failover %v", failoverStart.Sub(start), time.Since(failoverStart))

	// A fresh client (a new Terraform run) asks the sentinels and goes to the new primary.
	fresh := newClient(t, opts)
	if outcome, _, err := fresh.EnsureGroup(ctx, stream, "after", valkey.StartNew); err != nil || outcome != valkey.Created {
		t.Fatalf("EnsureGroup after failover: outcome=%v err=%v", outcome, err)
	}
	newPrimary := st.Replica.Client()
	defer newPrimary.Close()
	if groups := serverGroups(t, newPrimary, stream); len(groups) != 2 {
		t.Errorf("new primary groups = %+v, want before and after", groups)
	}
}

// TestClient_SentinelACLNeedsWait: with Sentinel EnsureGroup confirms its write with WAIT by
// default, so the documented ACL for Sentinel adds +wait; without it EnsureGroup is loud.
func TestClient_SentinelACLNeedsWait(t *testing.T) {
	t.Parallel()
	st := valkeytest.StartSentinelT(t, 2)
	ctx, stream := context.Background(), key(t, "stream")
	sentinel := &valkey.SentinelOptions{MasterName: st.MasterName, Addrs: st.Addrs()}
	user, pw := st.Primary.ACLUser(t, valkeytest.TagPattern(stream), valkeytest.ReplicaAckACL)
	c := newClient(t, valkey.Options{Sentinel: sentinel, Username: user, Password: pw})
	if outcome, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil || outcome != valkey.Created {
		t.Fatalf("EnsureGroup with the Sentinel ACL: outcome=%v err=%v", outcome, err)
	}
	if denials := st.Primary.ACLDenials(t, user); len(denials) != 0 {
		t.Errorf("ACL LOG has denials for %s: %v", user, denials)
	}

	without, pw2 := st.Primary.ACLUser(t, valkeytest.TagPattern(stream), valkeytest.MinimalACL)
	_, _, err := newClient(t, valkey.Options{Sentinel: sentinel, Username: without, Password: pw2}).EnsureGroup(ctx, stream, "audit", valkey.StartNew)
	var unconfirmed *valkey.UnconfirmedError
	if !errors.As(err, &unconfirmed) || !strings.HasPrefix(unconfirmed.Reply, "NOPERM") || unconfirmed.Outcome != valkey.Created {
		t.Errorf("err = %v, want the created group unconfirmed, WAIT refused with NOPERM", err)
	}
}
