package provider

import "testing"

// BenchmarkParseGroupID splits import IDs at the last "/".
func BenchmarkParseGroupID(b *testing.B) {
	for _, bc := range []struct {
		name, id string
		ok       bool
	}{
		{"plain", "orders/billing", true},
		{"hashtag", "emq:{orders}:stream:main/billing", true},
		{"slashes_in_stream", "tenant/acme/events/v2/billing", true},
		{"no_slash", "emq:{orders}:stream:main", false},
		{"empty_name", "emq:{orders}:stream:main/", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, ok := parseGroupID(bc.id); ok != bc.ok {
					b.Fatalf("parseGroupID(%q) ok = %v, want %v", bc.id, ok, bc.ok)
				}
			}
		})
	}
}
