package valkey_test

import (
	"context"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// redis62Fields are what Redis 7.0 added to XINFO GROUPS (entries-read, lag) and XINFO STREAM
// (entries-added, max-deleted-entry-id, recorded-first-entry-id): a server of Redis 6.2's
// protocol, as Upstash documents itself, sends none of them.
var redis62Fields = []string{"entries-read", "lag", "entries-added", "max-deleted-entry-id", "recorded-first-entry-id"}

// TestOlderServer_XINFOWithoutEntriesReadOrLagReadsAsUnknown: through a proxy that takes those
// fields out of every XINFO reply, every read of a group (Group, GroupDetail, Survey, the
// read-back of an adopting EnsureGroup) gives a nil lag and entries-read, never 0, and
// StreamInfo a nil entries-added and max-deleted-entry-id; what the older server does report
// is read as before.
func TestOlderServer_XINFOWithoutEntriesReadOrLagReadsAsUnknown(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), adminClient(t), key(t, "stream")
	valkeytest.SeedGroupWithConsumers(t, rdb, stream) // billing: lag 2 on Valkey
	p := faultproxy.StartProxyT(t, server(t).Addr(),
		faultproxy.Fault{Command: "XINFO GROUPS", Action: faultproxy.DropFields, Fields: redis62Fields},
		faultproxy.Fault{Command: "XINFO STREAM", Action: faultproxy.DropFields, Fields: redis62Fields})
	c := newClient(t, valkey.Options{URL: p.URL()})

	unknown := func(what string, g valkey.Group) {
		t.Helper()
		if g.Lag != nil || g.EntriesRead != nil {
			t.Errorf("%s: lag %v, entries-read %v; want both unknown (nil)", what, g.Lag, g.EntriesRead)
		}
		if g.Name != "billing" || g.Consumers != 3 || g.Pending != 2 || g.LastDeliveredID != "3-1" {
			t.Errorf("%s: %+v; want billing with 3 consumers, 2 pending, last delivered 3-1", what, g)
		}
	}
	g, found, err := c.Group(ctx, stream, "billing")
	if err != nil || !found {
		t.Fatalf("Group: %v, found %v", err, found)
	}
	unknown("Group", g)
	g, _, err = c.GroupDetail(ctx, stream, "billing")
	if err != nil {
		t.Fatalf("GroupDetail: %v", err)
	}
	unknown("GroupDetail", g)
	survey, err := c.Survey(ctx, stream)
	if err != nil || survey.BacklogErr != nil {
		t.Fatalf("Survey: %v, backlog %v", err, survey.BacklogErr)
	}
	if g, found := valkey.FindGroup(survey.Groups, "billing"); !found {
		t.Errorf("Survey: no group billing in %+v", survey.Groups)
	} else {
		unknown("Survey", g)
	}
	if survey.Backlog.Length != 5 || survey.Backlog.FirstID != "1-1" || survey.Backlog.LastID != "5-1" {
		t.Errorf("Survey backlog %+v; want 5 entries from 1-1 to 5-1", survey.Backlog)
	}
	outcome, g, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew)
	if err != nil || outcome != valkey.Adopted {
		t.Fatalf("EnsureGroup: %v, %v; want Adopted", outcome, err)
	}
	unknown("EnsureGroup's read-back", g)

	s, err := c.StreamInfo(ctx, stream)
	if err != nil {
		t.Fatalf("StreamInfo: %v", err)
	}
	if s.EntriesAdded != nil || s.MaxDeletedEntryID != nil {
		t.Errorf("StreamInfo: entries-added %v, max-deleted-entry-id %v; want both unknown (nil)", s.EntriesAdded, s.MaxDeletedEntryID)
	}
	if s.Length != 5 || s.LastGeneratedID != "5-1" || s.FirstEntryID == nil || *s.FirstEntryID != "1-1" || len(s.Groups) != 2 {
		t.Errorf("StreamInfo = %+v; want 5 entries, last generated 5-1, first 1-1, two groups", s)
	}
}
