package valkey_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

func TestStreamInfo_MatchesServer(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	valkeytest.SeedStreamWithGaps(t, rdb, stream)

	got, err := c.StreamInfo(ctx, stream)
	if err != nil {
		t.Fatalf("StreamInfo: %v", err)
	}
	want, err := rdb.XInfoStream(ctx, stream).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != stream || got.Length != want.Length || got.LastGeneratedID != want.LastGeneratedID ||
		got.EntriesAdded == nil || *got.EntriesAdded != want.EntriesAdded || got.MaxDeletedEntryID == nil ||
		*got.MaxDeletedEntryID != want.MaxDeletedEntryID {
		t.Errorf("StreamInfo = %+v, server says %+v", got, want)
	}
	if got.Length != 3 || got.LastGeneratedID != "5-1" || *got.MaxDeletedEntryID != "5-1" || *got.EntriesAdded != 5 {
		t.Errorf("StreamInfo = %+v, want length 3, last generated 5-1, max deleted 5-1, 5 added", got)
	}
	if got.FirstEntryID == nil || *got.FirstEntryID != want.FirstEntry.ID || *got.FirstEntryID != "2-1" {
		t.Errorf("first entry = %v, server says %q", got.FirstEntryID, want.FirstEntry.ID)
	}
	if got.LastEntryID == nil || *got.LastEntryID != want.LastEntry.ID || *got.LastEntryID != "4-1" {
		t.Errorf("last entry = %v, server says %q", got.LastEntryID, want.LastEntry.ID)
	}
	var serverNames []string
	for _, g := range serverGroups(t, rdb, stream) {
		serverNames = append(serverNames, g.Name)
	}
	if !slices.Equal(got.Groups, serverNames) || len(got.Groups) != 2 {
		t.Errorf("groups = %q, server lists %q", got.Groups, serverNames)
	}
}

func TestStreamInfo_EmptyStreamHasNoEntryIDs(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	if err := rdb.XGroupCreateMkStream(ctx, stream, "g", "$").Err(); err != nil {
		t.Fatal(err)
	}

	got, err := c.StreamInfo(ctx, stream)
	if err != nil {
		t.Fatalf("StreamInfo: %v", err)
	}
	if got.Length != 0 || got.FirstEntryID != nil || got.LastEntryID != nil || got.LastGeneratedID != "0-0" {
		t.Errorf("empty stream = %+v, want length 0, no first or last entry, last generated 0-0", got)
	}
	if !slices.Equal(got.Groups, []string{"g"}) {
		t.Errorf("groups = %q, want [g]", got.Groups)
	}
}

func TestStreamInfo_MissingIsNotFound(t *testing.T) {
	t.Parallel()
	stream := key(t, "stream")
	_, err := newClient(t, valkey.Options{}).StreamInfo(context.Background(), stream)
	var nf *valkey.NotFoundError
	if !errors.As(err, &nf) || nf.Stream != stream || nf.Group != "" {
		t.Fatalf("err = %v (%T), want *NotFoundError naming stream %q", err, err, stream)
	}
}

func TestGroupDetail_MatchesServer(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	valkeytest.SeedGroupWithConsumers(t, rdb, stream)

	g, consumers, err := c.GroupDetail(ctx, stream, "billing")
	if err != nil {
		t.Fatalf("GroupDetail: %v", err)
	}
	want := serverGroups(t, rdb, stream)[1] // audit, then billing
	if g.Name != "billing" || want.Name != g.Name || g.Consumers != want.Consumers || g.Pending != want.Pending ||
		g.LastDeliveredID != want.LastDeliveredID || g.EntriesRead == nil || *g.EntriesRead != want.EntriesRead ||
		g.Lag == nil || *g.Lag != want.Lag {
		t.Errorf("group = %+v, server says %+v", g, want)
	}
	if g.Consumers != 3 || g.Pending != 2 || *g.Lag != 2 {
		t.Errorf("group = %+v, want 3 consumers, 2 pending, lag 2", g)
	}
	serverConsumers, err := rdb.XInfoConsumers(ctx, stream, "billing").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(consumers) != len(serverConsumers) {
		t.Fatalf("consumers = %+v, server lists %+v", consumers, serverConsumers)
	}
	for i, sc := range serverConsumers {
		got := consumers[i]
		if got.Name != sc.Name || got.Pending != sc.Pending || got.IdleMs < 0 || got.IdleMs > sc.Idle.Milliseconds()+1000 {
			t.Errorf("consumer %d = %+v, server says %+v", i, got, sc)
		}
	}
	pending := map[string]int64{}
	for _, cons := range consumers {
		pending[cons.Name] = cons.Pending
	}
	if pending["alice"] != 1 || pending["bob"] != 1 || pending["carol"] != 0 || len(pending) != 3 {
		t.Errorf("pending per consumer = %v, want alice 1, bob 1, carol 0", pending)
	}
}

func TestGroupDetail_MissingStreamOrGroupIsNotFound(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	var nf *valkey.NotFoundError
	if _, _, err := c.GroupDetail(ctx, stream, "billing"); !errors.As(err, &nf) || nf.Stream != stream || nf.Group != "" {
		t.Errorf("missing stream: err = %v, want *NotFoundError naming only the stream", err)
	}
	if err := rdb.XGroupCreateMkStream(ctx, stream, "other", "$").Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.GroupDetail(ctx, stream, "billing"); !errors.As(err, &nf) || nf.Stream != stream || nf.Group != "billing" {
		t.Errorf("missing group: err = %v, want *NotFoundError naming group billing", err)
	}
}

// reads are the client's read calls, each reduced to its error; Group finding the group is an
// error too, as the tests below expect none.
var reads = map[string]func(ctx context.Context, c *valkey.Client, key string) error{
	"Group": func(ctx context.Context, c *valkey.Client, key string) error {
		_, found, err := c.Group(ctx, key, "g")
		if found {
			return errors.New("found the group")
		}
		return err
	},
	"StreamInfo": func(ctx context.Context, c *valkey.Client, key string) error {
		_, err := c.StreamInfo(ctx, key)
		return err
	},
	"GroupDetail": func(ctx context.Context, c *valkey.Client, key string) error {
		_, _, err := c.GroupDetail(ctx, key, "g")
		return err
	},
}

func TestReads_WrongTypeNamesTheType(t *testing.T) {
	t.Parallel()
	for name, read := range reads {
		for typ, seed := range wrongTypeSeeds {
			t.Run(name+"/"+typ, func(t *testing.T) {
				t.Parallel()
				ctx, c, rdb := context.Background(), newClient(t, valkey.Options{}), adminClient(t)
				k := key(t, typ)
				if err := seed(ctx, rdb, k); err != nil {
					t.Fatal(err)
				}
				var wt *valkey.WrongTypeError
				if err := read(ctx, c, k); !errors.As(err, &wt) || wt.Key != k || wt.Type != typ {
					t.Fatalf("err = %v (%T), want *WrongTypeError naming %q and %s", err, err, k, typ)
				}
			})
		}
	}
}

func TestReads_UnreachableIsNeverNotFound(t *testing.T) {
	t.Parallel()
	c := newClient(t, valkey.Options{URL: "valkey://127.0.0.1:1/0", MaxRetries: new(0)})
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var unreachable *valkey.UnreachableError
			if err := read(context.Background(), c, "s"); !errors.As(err, &unreachable) || unreachable.Addr != "127.0.0.1:1" {
				t.Fatalf("err = %v (%T), want *UnreachableError at 127.0.0.1:1: an unreachable server must never read as missing", err, err)
			}
		})
	}
}
