package valkey_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// BenchmarkEnsureGroup runs EnsureGroup against the package's real server: each iteration is one
// round trip (XGROUP CREATE + XINFO GROUPS pipelined).
func BenchmarkEnsureGroup(b *testing.B) {
	ctx := context.Background()
	b.Run("create", func(b *testing.B) {
		c, stream := newClient(b, valkey.Options{}), key(b, "stream")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if outcome, _, err := c.EnsureGroup(ctx, stream, fmt.Sprintf("g%d", i), valkey.StartNew); err != nil || outcome != valkey.Created {
				b.Fatalf("EnsureGroup: %v, %v", outcome, err)
			}
			i++
			if i%100 == 0 { // keep XINFO GROUPS replies small, as in a real stream
				stream = key(b, "stream")
			}
		}
	})
	b.Run("adopt", func(b *testing.B) {
		c, stream := newClient(b, valkey.Options{}), key(b, "stream")
		if _, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if outcome, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil || outcome != valkey.Adopted {
				b.Fatalf("EnsureGroup: %v, %v", outcome, err)
			}
		}
	})
}

// BenchmarkGroup reads one group of ten on a stream: "cached" is every refresh after the
// first on that stream in one provider process; "fetch" asks the server each time (a new
// stream per iteration).
func BenchmarkGroup(b *testing.B) {
	ctx := context.Background()
	setup := func(b *testing.B, c *valkey.Client, stream string) {
		for g := range 10 {
			if _, _, err := c.EnsureGroup(ctx, stream, fmt.Sprintf("g%d", g), valkey.StartNew); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("cached", func(b *testing.B) {
		c, stream := newClient(b, valkey.Options{}), key(b, "stream")
		setup(b, c, stream)
		b.ReportAllocs()
		for b.Loop() {
			if _, found, err := c.Group(ctx, stream, "g7"); err != nil || !found {
				b.Fatalf("Group: %v, %v", found, err)
			}
		}
	})
	b.Run("fetch", func(b *testing.B) {
		const streams = 200
		c := newClient(b, valkey.Options{})
		prefix := key(b, "stream")
		for s := range streams {
			setup(b, c, fmt.Sprintf("%s:%d", prefix, s))
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			// A fresh client per lap of the streams empties the cache without a reconnect
			// per iteration.
			if i%streams == 0 {
				b.StopTimer()
				c = newClient(b, valkey.Options{})
				if err := c.Universal().Ping(ctx).Err(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if _, found, err := c.Group(ctx, fmt.Sprintf("%s:%d", prefix, i%streams), "g7"); err != nil || !found {
				b.Fatalf("Group: %v, %v", found, err)
			}
			i++
		}
	})
}
