package valkey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// TestCluster_SlotMapFailureWritesNothing: a cluster client loads its slot map (CLUSTER SLOTS)
// inside the first command that needs it, and go-redis gave a failure there to that command as
// its own error. EnsureGroup then read its create as written and its reply as lost ("Consumer
// Group Outcome Unknown"), though XGROUP CREATE was never sent, and reads (Group, Survey,
// StreamInfo, GroupDetail, ListGroups) quoted CLUSTER SLOTS's refusal as their own. (Found
// while building the fault campaign's Cluster mode; put back, the campaign catches it: the
// plant cluster-slot-map-ignored.) Now the slot map is asked for first: its failure is a
// connection that could not be opened, step CLUSTER SLOTS, which EnsureGroup may try again.
func TestCluster_SlotMapFailureWritesNothing(t *testing.T) { //nolint:tparallel // the subtests share the proxies' faults in turn
	t.Parallel()
	pc := faultproxy.StartProxiedClusterT(t, 3)
	for _, p := range pc.Proxies {
		p.KeepLog()
	}
	inject := func(faults ...faultproxy.Fault) {
		for _, p := range pc.Proxies {
			p.Inject(faults...)
		}
	}
	creates := func() int {
		n := 0
		for _, p := range pc.Proxies {
			for _, r := range p.Log() {
				if r.Command == "XGROUP CREATE" {
					n++
				}
			}
		}
		return n
	}
	ctx, stream := context.Background(), "{a}:"+key(t, "stream")
	client := func(retries int) *valkey.Client {
		return newClient(t, valkey.Options{ClusterAddrs: pc.ProxyAddrs(), CommandTimeout: 500 * time.Millisecond,
			DialTimeout: time.Second, MaxRetries: new(retries), MinReplicaAcks: new(0)}) // no replicas: no WAIT, whatever the mode's default
	}
	for _, f := range []faultproxy.Fault{
		{Command: "CLUSTER SLOTS", Action: faultproxy.Hang},
		{Command: "CLUSTER SLOTS", Action: faultproxy.CutReply},
		{Command: "CLUSTER SLOTS", Action: faultproxy.DropReply},
		{Command: "CLUSTER SLOTS", Action: faultproxy.Answer, Reply: "NOPERM this user has no permissions to run the 'cluster|slots' command"},
	} {
		t.Run(f.Action.String(), func(t *testing.T) {
			inject(f)
			defer inject()
			_, _, err := client(0).EnsureGroup(ctx, stream, "g", valkey.StartNew)
			var u *valkey.UnreachableError
			if !errors.As(err, &u) || u.Step != "CLUSTER SLOTS" {
				t.Errorf("EnsureGroup with no slot map: %T %v; want an UnreachableError at step CLUSTER SLOTS", err, err)
			}
			if n := creates(); n != 0 {
				t.Errorf("XGROUP CREATE passed the proxies %d times; with no slot map nothing may be sent", n)
			}
			_, _, err = client(0).Group(ctx, stream, "g")
			if !errors.As(err, &u) || u.Step != "CLUSTER SLOTS" {
				t.Errorf("a read with no slot map: %T %v; want an UnreachableError at step CLUSTER SLOTS", err, err)
			}
			if _, err = client(0).Survey(ctx, stream); !errors.As(err, &u) || u.Step != "CLUSTER SLOTS" {
				t.Errorf("a plan's survey with no slot map: %T %v; want an UnreachableError at step CLUSTER SLOTS", err, err)
			}
			if _, err = client(0).StreamInfo(ctx, stream); !errors.As(err, &u) || u.Step != "CLUSTER SLOTS" {
				t.Errorf("StreamInfo with no slot map: %T %v; want an UnreachableError at step CLUSTER SLOTS", err, err)
			}
			if _, _, err = client(0).GroupDetail(ctx, stream, "g"); !errors.As(err, &u) || u.Step != "CLUSTER SLOTS" {
				t.Errorf("GroupDetail with no slot map: %T %v; want an UnreachableError at step CLUSTER SLOTS", err, err)
			}
			for name, opts := range map[string]valkey.ListOptions{"named": {Streams: []string{stream}}, "matched": {Match: stream}} {
				for _, err = range client(0).ListGroups(ctx, opts) {
					break
				}
				if !errors.As(err, &u) || u.Step != "CLUSTER SLOTS" {
					t.Errorf("ListGroups of a stream %s, with no slot map: %T %v; want an UnreachableError at step CLUSTER SLOTS", name, err, err)
				}
			}
		})
	}
	// Nothing was written, so EnsureGroup tries again (MaxRetries) and creates the group once.
	inject(faultproxy.Fault{Command: "CLUSTER SLOTS", Action: faultproxy.CutReply, Times: 1})
	if outcome, _, err := client(1).EnsureGroup(ctx, stream, "g", valkey.StartNew); err != nil || outcome != valkey.Created {
		t.Fatalf("EnsureGroup after one failed CLUSTER SLOTS = %v, %v; want Created on the second attempt", outcome, err)
	}
	if n := creates(); n != 1 {
		t.Errorf("XGROUP CREATE passed the proxies %d times, want once", n)
	}
}
