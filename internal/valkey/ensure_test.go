package valkey_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

func TestEnsureGroup_CreatesGroupAndStream(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)

	outcome, g, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew)
	if err != nil {
		t.Fatalf("EnsureGroup: %v", err)
	}
	if outcome != valkey.Created {
		t.Errorf("outcome = %v, want created", outcome)
	}
	if g.Name != "billing" || g.LastDeliveredID != "0-0" {
		t.Errorf("read-back group = %+v, want billing at 0-0", g)
	}
	if typ := rdb.Type(ctx, stream).Val(); typ != "stream" {
		t.Errorf("TYPE %s = %q, want stream (MKSTREAM)", stream, typ)
	}
	groups := serverGroups(t, rdb, stream)
	if len(groups) != 1 || groups[0].Name != "billing" {
		t.Errorf("server groups = %+v, want only billing", groups)
	}
}

func TestEnsureGroup_AdoptsExistingGroup(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: "5-1", Values: []string{"k", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XGroupCreate(ctx, stream, "billing", "$").Err(); err != nil {
		t.Fatal(err)
	}

	outcome, g, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartHead)
	if err != nil {
		t.Fatalf("EnsureGroup: %v", err)
	}
	if outcome != valkey.Adopted {
		t.Errorf("outcome = %v, want adopted", outcome)
	}
	if g.LastDeliveredID != "5-1" {
		t.Errorf("last-delivered-id = %q, want the existing group's 5-1 (head must not be applied)", g.LastDeliveredID)
	}
	if groups := serverGroups(t, rdb, stream); len(groups) != 1 || groups[0].LastDeliveredID != "5-1" {
		t.Errorf("server groups = %+v, want one group still at 5-1", groups)
	}
}

// readAll reads every entry the group would deliver to a new consumer.
func readAll(t *testing.T, rdb *redis.Client, stream, group string) int {
	t.Helper()
	res, err := rdb.XReadGroup(context.Background(), &redis.XReadGroupArgs{
		Group: group, Consumer: "c1", Streams: []string{stream, ">"}, Count: 100, Block: -1,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return 0
	}
	if err != nil {
		t.Fatalf("XREADGROUP: %v", err)
	}
	return len(res[0].Messages)
}

func TestEnsureGroup_StartPositions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		start valkey.Start
		want  int
	}{
		{valkey.StartHead, 3}, // replays what was there
		{valkey.StartNew, 0},  // only what comes later
	} {
		t.Run(string(tc.start), func(t *testing.T) {
			t.Parallel()
			ctx, c, rdb, stream := fixture(t)
			for range 3 {
				if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"k", "v"}}).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := c.EnsureGroup(ctx, stream, "g", tc.start); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, rdb, stream, "g"); got != tc.want {
				t.Errorf("%s: group delivered %d entries written before it, want %d", tc.start, got, tc.want)
			}
			if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"k", "later"}}).Err(); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, rdb, stream, "g"); got != 1 {
				t.Errorf("%s: group delivered %d entries written after it, want 1", tc.start, got)
			}
		})
	}
}

// wrongTypeSeeds store a value of each type other than stream at a key.
var wrongTypeSeeds = map[string]func(ctx context.Context, rdb *redis.Client, key string) error{
	"string": func(ctx context.Context, rdb *redis.Client, k string) error { return rdb.Set(ctx, k, "x", 0).Err() },
	"list":   func(ctx context.Context, rdb *redis.Client, k string) error { return rdb.RPush(ctx, k, "x").Err() },
	"hash":   func(ctx context.Context, rdb *redis.Client, k string) error { return rdb.HSet(ctx, k, "f", "x").Err() },
	"set":    func(ctx context.Context, rdb *redis.Client, k string) error { return rdb.SAdd(ctx, k, "x").Err() },
	"zset": func(ctx context.Context, rdb *redis.Client, k string) error {
		return rdb.ZAdd(ctx, k, redis.Z{Score: 1, Member: "x"}).Err()
	},
}

func TestEnsureGroup_WrongTypeNamesTheType(t *testing.T) {
	t.Parallel()
	for typ, seed := range wrongTypeSeeds {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			ctx, c, rdb := context.Background(), newClient(t, valkey.Options{}), adminClient(t)
			k := key(t, typ)
			if err := seed(ctx, rdb, k); err != nil {
				t.Fatal(err)
			}
			_, _, err := c.EnsureGroup(ctx, k, "g", valkey.StartNew)
			var wt *valkey.WrongTypeError
			if !errors.As(err, &wt) {
				t.Fatalf("err = %v (%T), want *WrongTypeError", err, err)
			}
			if wt.Key != k || wt.Type != typ {
				t.Errorf("WrongTypeError = %+v, want key %q type %q", wt, k, typ)
			}
			if !strings.Contains(err.Error(), typ) || !strings.Contains(err.Error(), k) {
				t.Errorf("message %q does not name the key and the type", err)
			}
			if got := rdb.Type(ctx, k).Val(); got != typ {
				t.Errorf("key now holds %q, EnsureGroup must leave it a %s", got, typ)
			}
		})
	}
}

func TestEnsureGroup_RefusedCarriesServerWords(t *testing.T) {
	t.Parallel()
	ctx, rdb := context.Background(), adminClient(t)
	user, pw := server(t).ACLUser(t, "*", "+@all -xgroup")
	c := newClient(t, valkey.Options{Username: user, Password: pw})
	stream := key(t, "stream")

	_, _, err := c.EnsureGroup(ctx, stream, "g", valkey.StartNew)
	var refused *valkey.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err = %v (%T), want *RefusedError", err, err)
	}
	if refused.Code() != "NOPERM" || refused.Key != stream || refused.Addr != server(t).Addr() {
		t.Errorf("RefusedError = %+v, want NOPERM on %s at %s", refused, stream, server(t).Addr())
	}
	if n := rdb.Exists(ctx, stream).Val(); n != 0 {
		t.Errorf("stream exists after a refused XGROUP CREATE; nothing may be written")
	}
}

func TestEnsureGroup_UnreachableNamesAddress(t *testing.T) {
	t.Parallel()
	c := newClient(t, valkey.Options{URL: "valkey://127.0.0.1:1/0", MaxRetries: new(0)})
	_, _, err := c.EnsureGroup(context.Background(), "s", "g", valkey.StartNew)
	var unreachable *valkey.UnreachableError
	if !errors.As(err, &unreachable) {
		t.Fatalf("err = %v (%T), want *UnreachableError", err, err)
	}
	if unreachable.Addr != "127.0.0.1:1" || unreachable.Cause() != valkey.CauseRefused {
		t.Errorf("got addr %q cause %v", unreachable.Addr, unreachable.Cause())
	}
}

func TestEnsureGroup_WrongPasswordIsAuthFailure(t *testing.T) {
	t.Parallel()
	c := newClient(t, valkey.Options{Username: "nobody", Password: "wrong-pw-123", MaxRetries: new(0)})
	_, _, err := c.EnsureGroup(context.Background(), key(t, "s"), "g", valkey.StartNew)
	var unreachable *valkey.UnreachableError
	if !errors.As(err, &unreachable) {
		t.Fatalf("err = %v (%T), want *UnreachableError", err, err)
	}
	if unreachable.Cause() != valkey.CauseAuth {
		t.Errorf("cause %v, want an authentication failure", unreachable.Cause())
	}
	if strings.Contains(err.Error(), "wrong-pw-123") {
		t.Errorf("error %q leaks the password", err)
	}
}

func TestEnsureGroup_UndeclaredStartSendsNothing(t *testing.T) {
	t.Parallel()
	ctx, c, rdb := context.Background(), newClient(t, valkey.Options{}), adminClient(t)
	for _, start := range []valkey.Start{"", "$", "0", "tail"} {
		stream := key(t, "stream")
		if _, _, err := c.EnsureGroup(ctx, stream, "g", start); err == nil {
			t.Errorf("start %q accepted, want an error", start)
		}
		if rdb.Exists(ctx, stream).Val() != 0 {
			t.Errorf("start %q created the stream", start)
		}
	}
}
