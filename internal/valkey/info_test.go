package valkey_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

func TestGroup_MissingStreamOrGroupIsNotFound(t *testing.T) {
	t.Parallel()
	ctx, c := context.Background(), newClient(t, valkey.Options{})
	stream := key(t, "stream")
	if _, found, err := c.Group(ctx, stream, "g"); err != nil || found {
		t.Fatalf("missing stream: found=%v err=%v, want not found and no error", found, err)
	}
	if _, _, err := c.EnsureGroup(ctx, stream, "other", valkey.StartNew); err != nil {
		t.Fatal(err)
	}
	if _, found, err := c.Group(ctx, stream, "g"); err != nil || found {
		t.Fatalf("missing group: found=%v err=%v, want not found and no error", found, err)
	}
}

func TestGroup_KeepsServerNullsAsNil(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	valkeytest.SeedGroupWithUnknownLag(t, rdb, stream)

	sawNil, sawValue := false, false
	for _, serverValues := range valkeytest.XInfoGroups(t, rdb, stream) {
		name, _ := serverValues["name"].(string)
		g, found, err := c.Group(ctx, stream, name)
		if err != nil || !found {
			t.Fatalf("%s: found=%v err=%v", name, found, err)
		}
		for field, got := range map[string]*int64{"entries-read": g.EntriesRead, "lag": g.Lag} {
			want := serverValues[field]
			switch {
			case want == nil && got != nil:
				t.Errorf("%s %s = %d, server reports nil", name, field, *got)
			case want != nil && (got == nil || want != any(*got)):
				t.Errorf("%s %s = %v, server reports %v", name, field, got, want)
			case want == nil:
				sawNil = true
			default:
				sawValue = true
			}
		}
	}
	if !sawNil || !sawValue {
		t.Errorf("test setup should produce both nil and numeric counters (nil=%v value=%v)", sawNil, sawValue)
	}
}

// ownServer is a server of the test's own, whose command counts no other test adds to: a
// client of it and an admin client.
func ownServer(t *testing.T) (context.Context, *valkey.Client, *redis.Client) {
	own := valkeytest.StartT(t)
	rdb := own.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	return context.Background(), newClient(t, valkey.Options{URL: own.URL()}), rdb
}

func TestGroups_OneXinfoPerStreamAcrossCallers(t *testing.T) {
	t.Parallel()
	ctx, c, rdb := ownServer(t)
	const groups = 50
	for i := range groups {
		if err := rdb.XGroupCreateMkStream(ctx, "orders", "g"+strconv.Itoa(i), "$").Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.ConfigResetStat(ctx)

	var wg sync.WaitGroup
	for i := range groups {
		wg.Go(func() {
			if _, found, err := c.Group(ctx, "orders", "g"+strconv.Itoa(i)); err != nil || !found {
				t.Errorf("g%d: found=%v err=%v", i, found, err)
			}
		})
	}
	wg.Wait()
	if calls := valkeytest.CommandCalls(t, rdb, "xinfo|groups"); calls != 1 {
		t.Errorf("%d groups on one stream cost %d XINFO GROUPS, want 1", groups, calls)
	}
}

func TestGroup_NotStaleAfterEnsureGroup(t *testing.T) {
	t.Parallel()
	ctx, c := context.Background(), newClient(t, valkey.Options{})
	stream := key(t, "stream")
	if _, _, err := c.EnsureGroup(ctx, stream, "a", valkey.StartNew); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := c.Group(ctx, stream, "b"); found {
		t.Fatal("b found before it was created")
	}
	if _, _, err := c.EnsureGroup(ctx, stream, "b", valkey.StartNew); err != nil {
		t.Fatal(err)
	}
	if _, found, err := c.Group(ctx, stream, "b"); err != nil || !found {
		t.Fatalf("after EnsureGroup created b: found=%v err=%v; a cached answer from before it was used", found, err)
	}
}

func TestEnsureGroup_ReadBackServesLaterReads(t *testing.T) {
	t.Parallel()
	ctx, c, rdb := ownServer(t)

	// Concurrent EnsureGroups on one stream: every group must be visible to reads after its own
	// returned, whichever read-back the cache kept.
	const groups = 20
	var wg sync.WaitGroup
	for i := range groups {
		wg.Go(func() {
			if _, _, err := c.EnsureGroup(ctx, "orders", "g"+strconv.Itoa(i), valkey.StartNew); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range groups {
		if _, found, err := c.Group(ctx, "orders", "g"+strconv.Itoa(i)); err != nil || !found {
			t.Errorf("g%d after its EnsureGroup: found=%v err=%v", i, found, err)
		}
	}

	// One EnsureGroup, then reads: the pipelined read-back answers them, no second XINFO GROUPS.
	rdb.ConfigResetStat(ctx)
	if _, _, err := c.EnsureGroup(ctx, "payments", "billing", valkey.StartNew); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, found, err := c.Group(ctx, "payments", "billing"); err != nil || !found {
			t.Fatalf("found=%v err=%v", found, err)
		}
	}
	if calls := valkeytest.CommandCalls(t, rdb, "xinfo|groups"); calls != 1 {
		t.Errorf("an EnsureGroup and three reads cost %d XINFO GROUPS, want 1 (its read-back)", calls)
	}
}
