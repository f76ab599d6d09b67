package provider

import "testing"

// BenchmarkParseGroupID splits import IDs at the last "/" and unescapes the name.
func BenchmarkParseGroupID(b *testing.B) {
	for _, bc := range []struct {
		name, id string
		ok       bool
	}{
		{"plain", "orders/billing", true},
		{"hashtag", "emq:{orders}:stream:main/billing", true},
		{"slashes_in_stream", "tenant/acme/events/v2/billing", true},
		{"escaped_name", "emq:{orders}:stream:main/team%2Fbilling", true},
		{"no_slash", "emq:{orders}:stream:main", false},
		{"empty_name", "emq:{orders}:stream:main/", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := parseGroupID(bc.id); (err == nil) != bc.ok {
					b.Fatalf("parseGroupID(%q) err = %v, want ok %v", bc.id, err, bc.ok)
				}
			}
		})
	}
}
