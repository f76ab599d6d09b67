package valkey_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestRedis70_EnsureGroupAndRead runs EnsureGroup's table and Read against redis-server 7.0, the
// Redis release Debian bookworm ships: same replies, same outcomes. make deps installs it.
func TestRedis70_EnsureGroupAndRead(t *testing.T) {
	bin := valkeytest.RedisT(t)
	t.Parallel()
	redisSrv := valkeytest.StartT(t, valkeytest.WithBinary(bin))
	ctx, rdb := context.Background(), redisSrv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	c := newClient(t, valkey.Options{URL: "redis://" + redisSrv.Addr()})

	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "orders", Values: []string{"k", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if outcome, _, err := c.EnsureGroup(ctx, "orders", "replay", valkey.StartHead); err != nil || outcome != valkey.Created {
		t.Fatalf("create: %v %v", outcome, err)
	}
	if outcome, _, err := c.EnsureGroup(ctx, "orders", "replay", valkey.StartNew); err != nil || outcome != valkey.Adopted {
		t.Fatalf("adopt: %v %v", outcome, err)
	}
	if n, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "replay", Consumer: "c", Streams: []string{"orders", ">"}, Block: -1}).Result(); err != nil || len(n[0].Messages) != 1 {
		t.Fatalf("head group read %v (err %v), want the 1 earlier entry", n, err)
	}
	if _, _, err := c.EnsureGroup(ctx, "fresh", "g", valkey.StartNew); err != nil || rdb.Type(ctx, "fresh").Val() != "stream" {
		t.Fatalf("MKSTREAM: err %v, type %q", err, rdb.Type(ctx, "fresh").Val())
	}
	if err := rdb.SAdd(ctx, "members", "x").Err(); err != nil {
		t.Fatal(err)
	}
	var wt *valkey.WrongTypeError
	if _, _, err := c.EnsureGroup(ctx, "members", "g", valkey.StartNew); !errors.As(err, &wt) || wt.Type != "set" {
		t.Fatalf("wrong type: %v", err)
	}
	if _, found, err := c.Group(ctx, "missing", "g"); err != nil || found {
		t.Fatalf("missing stream: found=%v err=%v", found, err)
	}
	// A new client, as a new Terraform run has: Group answers from a per-client cache.
	fresh := newClient(t, valkey.Options{URL: "redis://" + redisSrv.Addr()})
	if g, found, err := fresh.Group(ctx, "orders", "replay"); err != nil || !found || g.Pending != 1 {
		t.Fatalf("read: %+v found=%v err=%v", g, found, err)
	}
}
