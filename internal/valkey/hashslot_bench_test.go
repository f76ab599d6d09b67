package valkey_test

import (
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// BenchmarkHashSlot hashes keys with and without a hashtag.
func BenchmarkHashSlot(b *testing.B) {
	for _, bc := range []struct{ name, key string }{
		{"hashtag", "emq:{orders}:stream:main"},
		{"no_hashtag", "emq:orders:stream:main"},
		{"empty_hashtag", "emq:{}:orders:stream:main"},
		{"long_key", "tenant:acme:region:eu-west-1:service:billing:stream:events:v2:partition:0042"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if slot := valkey.HashSlot(bc.key); slot < 0 || slot >= valkey.HashSlots {
					b.Fatalf("HashSlot(%q) = %d", bc.key, slot)
				}
			}
		})
	}
}
