package valkey_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// clusterServer starts a cluster-enabled server of its own: CLUSTER KEYSLOT answers there
// even before any slot is assigned.
func clusterServer(tb testing.TB) *valkeytest.Server {
	tb.Helper()
	return valkeytest.StartT(tb, valkeytest.WithArgs("--cluster-enabled", "yes"))
}

// edgeKeys are the hashtag rule's corners, each written out so a failure names it.
var edgeKeys = []string{
	"", "a", "foo", "{", "}", "{}", "}{", "{}{}", "{}a", "a{}", "{}{a}", "{a}{b}", "{{a}}", "{{}}",
	"{a", "a}", "a{", "}a", "a{b", "a}b", "}{a}", "{a}}", "{{a}", "a{b}c", "a{b}c{d}e", "{user1000}.following",
	"{user1000}.followers", "emq:{orders}:stream:main", "emq:{orders}:stream/main", "{ü}", "日本{語}", "{日本}語",
	"\x00", "{\x00}", "\xff\xfe{\x80}", "{\xff", "\xc3\x28", "é{", "{é}", strings.Repeat("{", 100) + "}",
	strings.Repeat("x", 5000), "{" + strings.Repeat("y", 5000) + "}",
}

// generatedKeys are n keys drawn mostly from braces, a few letters, multi-byte UTF-8 and
// arbitrary bytes, so that most of them have interesting brace shapes.
func generatedKeys(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 16384))
	pieces := []string{"{", "}", "{", "}", "a", "b", ":", "/", "é", "日", "\U0001F600", "\x00", "{}", "}{"}
	keys := make([]string, 0, n)
	for range n {
		var b strings.Builder
		for range r.IntN(24) {
			if r.IntN(5) == 0 {
				b.WriteByte(byte(r.IntN(256)))
			} else {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
		}
		keys = append(keys, b.String())
	}
	return keys
}

func TestHashSlot_KnownValues(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]int{
		"":          0,
		"123456789": 0x31C3 % valkey.HashSlots, // the CRC16/XMODEM check value
		"foo":       12182,
		"bar":       5061,
		"{foo}bar":  12182,
	} {
		if got := valkey.HashSlot(key); got != want {
			t.Errorf("HashSlot(%q) = %d, want %d", key, got, want)
		}
	}
	if valkey.HashSlot("{}foo") == valkey.HashSlot("foo") {
		t.Errorf(`HashSlot("{}foo") hashed only "foo"; an empty tag must hash the whole key`)
	}
	if a, b := valkey.HashSlot("{user1000}.following"), valkey.HashSlot("{user1000}.followers"); a != b {
		t.Errorf("keys sharing the tag user1000 landed on slots %d and %d", a, b)
	}
}

func TestHashSlot_MatchesClusterKeyslot(t *testing.T) {
	t.Parallel()
	keys := append(append([]string{}, edgeKeys...), generatedKeys(10000, 1)...)
	want := clusterServer(t).KeySlots(t, keys)
	mismatches := 0
	for i, k := range keys {
		if got := valkey.HashSlot(k); int64(got) != want[i] {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("HashSlot(%q) = %d, CLUSTER KEYSLOT says %d", k, got, want[i])
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d keys disagree with the server", mismatches, len(keys))
	}
}

// crc16Bitwise is CRC16/XMODEM one bit at a time: a second, independent reading of the spec.
func crc16Bitwise(s string) int {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc)
}

// FuzzHashSlot checks HashSlot against a cluster-enabled server and against a bit-by-bit CRC
// of the tag. Its seed corpus lives in testdata/fuzz/FuzzHashSlot and runs with `go test`.
func FuzzHashSlot(f *testing.F) {
	for _, k := range edgeKeys[:20] {
		f.Add(k)
	}
	rdb := clusterServer(f).Client()
	f.Cleanup(func() { _ = rdb.Close() })
	f.Fuzz(func(t *testing.T, key string) {
		got := valkey.HashSlot(key)
		if got < 0 || got >= valkey.HashSlots {
			t.Fatalf("HashSlot(%q) = %d, outside 0..16383", key, got)
		}
		tag := valkey.HashTag(key)
		if want := crc16Bitwise(tag) % valkey.HashSlots; got != want {
			t.Errorf("HashSlot(%q) = %d, bitwise CRC16 of tag %q gives %d", key, got, tag, want)
		}
		if again := valkey.HashSlot(tag); again != got {
			t.Errorf("HashSlot(%q) = %d but HashSlot of its tag %q = %d; a tag must hash to its key's slot", key, got, tag, again)
		}
		if want := rdb.ClusterKeySlot(context.Background(), key); want.Err() != nil || int64(got) != want.Val() {
			t.Errorf("HashSlot(%q) = %d, CLUSTER KEYSLOT says %d (err %v)", key, got, want.Val(), want.Err())
		}
	})
}
