package valkeytest

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Streams in the shapes the read tests compare with XINFO. internal/valkey and
// internal/provider seed the same ones, so that both read the same answers from the server.

// XAdd adds one entry per ID to stream.
func XAdd(tb testing.TB, rdb redis.UniversalClient, stream string, ids ...string) {
	tb.Helper()
	for _, id := range ids {
		seeded(tb, rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, ID: id, Values: []string{"order", id}}))
	}
}

// SeedStreamWithGaps makes stream hold entries 2-1, 3-1 and 4-1 of the five it was given
// (1-1 and 5-1 deleted), and groups audit (from $) and billing (from 0): every field of
// XINFO STREAM differs from the others.
func SeedStreamWithGaps(tb testing.TB, rdb redis.UniversalClient, stream string) {
	tb.Helper()
	ctx := context.Background()
	XAdd(tb, rdb, stream, "1-1", "2-1", "3-1", "4-1", "5-1")
	seeded(tb, rdb.XDel(ctx, stream, "1-1", "5-1"), rdb.XGroupCreate(ctx, stream, "billing", "0"), rdb.XGroupCreate(ctx, stream, "audit", "$"))
}

// SeedGroupWithConsumers makes group billing on stream (entries 1-1 to 5-1, group from 0)
// where alice read two entries and acknowledged 1-1, bob read one and carol none: 3 consumers,
// 2 pending, last-delivered-id 3-1, entries-read 3, lag 2. Group audit (from $) stands beside
// it.
func SeedGroupWithConsumers(tb testing.TB, rdb redis.UniversalClient, stream string) {
	tb.Helper()
	ctx := context.Background()
	read := func(consumer string, n int64) redis.Cmder {
		return rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: consumer, Streams: []string{stream, ">"}, Count: n})
	}
	XAdd(tb, rdb, stream, "1-1", "2-1", "3-1", "4-1", "5-1")
	seeded(tb, rdb.XGroupCreate(ctx, stream, "billing", "0"), read("alice", 2), read("bob", 1), rdb.XAck(ctx, stream, "billing", "1-1"),
		rdb.XGroupCreateConsumer(ctx, stream, "billing", "carol"), rdb.XGroupCreate(ctx, stream, "audit", "$"))
}

// SeedGroupWithUnknownLag makes group midway on stream, created at 1-1 of entries 1-1 to 3-1,
// before 2-1 was deleted: a deletion inside its unread range leaves the server unable to
// compute its lag (nil). Groups fresh (from 0, created before the deletion) and caught-up
// (from $) have numbers.
func SeedGroupWithUnknownLag(tb testing.TB, rdb redis.UniversalClient, stream string) {
	tb.Helper()
	ctx := context.Background()
	XAdd(tb, rdb, stream, "1-1", "2-1", "3-1")
	seeded(tb, rdb.XGroupCreate(ctx, stream, "fresh", "0"), rdb.XGroupCreate(ctx, stream, "midway", "1-1"), rdb.XDel(ctx, stream, "2-1"),
		rdb.XGroupCreate(ctx, stream, "caught-up", "$"))
}

// XInfoGroups is XINFO GROUPS as the server sends it, one field -> value map per group, with
// the nils the server reports (go-redis's XInfoGroups turns a nil entries-read into 0, and a
// nil lag into -1).
func XInfoGroups(tb testing.TB, rdb redis.UniversalClient, stream string) []map[string]any {
	tb.Helper()
	raw, err := rdb.Do(context.Background(), "XINFO", "GROUPS", stream).Slice()
	if err != nil {
		tb.Fatalf("XINFO GROUPS %s: %v", stream, err)
	}
	groups := make([]map[string]any, len(raw))
	for i, row := range raw {
		groups[i] = map[string]any{}
		list, _ := row.([]any)
		for j := 0; j+1 < len(list); j += 2 {
			field, _ := list[j].(string)
			groups[i][field] = list[j+1]
		}
	}
	return groups
}

// seeded fails the test on the first of the commands, already sent, that the server refused.
func seeded(tb testing.TB, cmds ...redis.Cmder) {
	tb.Helper()
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			tb.Fatalf("%v: %v", cmd.Args(), err)
		}
	}
}
