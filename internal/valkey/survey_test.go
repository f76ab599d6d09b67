package valkey_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

func TestSurvey_GroupsAndBacklog(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	valkeytest.XAdd(t, rdb, stream, "1700000000000-0", "1700000000001-0", "1700000060000-5")
	if err := rdb.XGroupCreate(ctx, stream, "billing", "0").Err(); err != nil {
		t.Fatal(err)
	}
	s, err := c.Survey(ctx, stream)
	if err != nil {
		t.Fatalf("Survey: %v", err)
	}
	want := valkey.Backlog{Length: 3, FirstID: "1700000000000-0", LastID: "1700000060000-5"}
	if !s.Exists || s.Backlog != want || s.BacklogErr != nil || len(s.Groups) != 1 || s.Groups[0].Name != "billing" {
		t.Errorf("Survey = %+v, want the stream with %+v and group billing", s, want)
	}
}

func TestSurvey_EmptyAndMissingStreams(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	if s, err := c.Survey(ctx, stream); err != nil || s.Exists || s.Backlog != (valkey.Backlog{}) {
		t.Errorf("missing stream: %+v, %v; want one that does not exist", s, err)
	}
	empty := key(t, "empty")
	if err := rdb.XGroupCreateMkStream(ctx, empty, "g", "$").Err(); err != nil {
		t.Fatal(err)
	}
	if s, err := c.Survey(ctx, empty); err != nil || !s.Exists || s.Backlog != (valkey.Backlog{}) {
		t.Errorf("empty stream: %+v, %v; want it to exist with no entries", s, err)
	}
}

func TestSurvey_KeyOfAnotherTypeIsAnError(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	if err := rdb.Set(ctx, stream, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var wt *valkey.WrongTypeError
	if _, err := c.Survey(ctx, stream); !errors.As(err, &wt) || wt.Type != "string" {
		t.Errorf("err = %v, want a WrongTypeError naming string", err)
	}
}

// TestSurvey_BacklogRefusedKeepsTheGroups: a user allowed XINFO GROUPS but not XINFO STREAM
// still learns the groups; the backlog comes back as the server's refusal.
func TestSurvey_BacklogRefusedKeepsTheGroups(t *testing.T) {
	t.Parallel()
	ctx, _, rdb, stream := fixture(t)
	valkeytest.XAdd(t, rdb, stream, "5-1")
	user, pw := server(t).ACLUser(t, valkeytest.TagPattern(stream), valkeytest.EnsureGroupACL)
	s, err := newClient(t, valkey.Options{Username: user, Password: pw}).Survey(ctx, stream)
	var refused *valkey.RefusedError
	if err != nil || !s.Exists || !errors.As(s.BacklogErr, &refused) || refused.Code() != "NOPERM" {
		t.Errorf("Survey = %+v, %v; want the stream with a NOPERM backlog error", s, err)
	}
}

// TestSurvey_OneRoundTripPerStream: many callers on one stream cost one round trip carrying
// XINFO GROUPS and XINFO STREAM, counted on the wire, and the groups it read answer Group.
func TestSurvey_OneRoundTripPerStream(t *testing.T) {
	t.Parallel()
	proxy := faultproxy.StartProxyT(t, server(t).Addr()) // it counts its own connections only
	stream := key(t, "stream")
	valkeytest.XAdd(t, adminClient(t), stream, "1-0", "2-0")
	c := newClient(t, valkey.Options{URL: "valkey://" + proxy.Addr() + "/0"})
	ctx := t.Context()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if s, err := c.Survey(ctx, stream); err != nil || s.Backlog.Length != 2 {
				t.Errorf("Survey = %+v, %v", s, err)
			}
		})
	}
	wg.Wait()
	if _, found, err := c.Group(ctx, stream, "billing"); err != nil || found {
		t.Errorf("Group after Survey: found=%v err=%v", found, err)
	}
	_ = c.Close() // the proxy counts a connection's last round trip when it ends
	trips, _ := proxy.Take()
	if trips["XINFO GROUPS + XINFO STREAM"] != 1 || len(trips) != 2 { // the other: the connection's HELLO
		t.Errorf("round trips by what they carried: %v; want one XINFO GROUPS + XINFO STREAM, and the handshake", trips)
	}
}

func TestEntryTime_ReadsTheMilliseconds(t *testing.T) {
	for id, want := range map[string]time.Time{
		"1700000000000-0": time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC),
		"0-1":             time.UnixMilli(0).UTC(),
	} {
		if got, ok := valkey.EntryTime(id); !ok || !got.Equal(want) {
			t.Errorf("EntryTime(%q) = %v, %v; want %v", id, got, ok, want)
		}
	}
	for _, id := range []string{"", "abc-0", "-1-0", "12"} {
		if _, ok := valkey.EntryTime(id); ok {
			t.Errorf("EntryTime(%q) accepted", id)
		}
	}
}

// TestSurvey_KeptAcrossEnsureGroup: Terraform plans each group again right before its Create, so a
// survey must outlive EnsureGroup on its stream, with the new group in it, or every re-plan
// after a Create would cost another round trip.
func TestSurvey_KeptAcrossEnsureGroup(t *testing.T) {
	t.Parallel()
	ctx, c, rdb := ownServer(t)
	valkeytest.XAdd(t, rdb, "orders", "1-0")
	if _, err := c.Survey(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.EnsureGroup(ctx, "orders", "billing", valkey.StartHead); err != nil {
		t.Fatal(err)
	}
	s, err := c.Survey(ctx, "orders")
	if _, found := valkey.FindGroup(s.Groups, "billing"); err != nil || !found || s.Backlog.Length != 1 {
		t.Errorf("Survey after EnsureGroup = %+v, %v; want billing and the backlog of 1", s, err)
	}
	if n := valkeytest.CommandCalls(t, rdb, "xinfo|stream"); n != 1 {
		t.Errorf("XINFO STREAM ran %d times, want 1", n)
	}
}
