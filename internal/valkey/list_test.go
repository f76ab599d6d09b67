package valkey_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// seedGroups creates every group on every stream (with the stream), pipelined in pages.
func seedGroups(t testing.TB, rdb redis.UniversalClient, streams []string, groups ...string) {
	t.Helper()
	for page := range slices.Chunk(streams, 500) {
		_, err := rdb.Pipelined(context.Background(), func(p redis.Pipeliner) error {
			for _, stream := range page {
				for _, g := range groups {
					p.XGroupCreateMkStream(context.Background(), stream, g, "$")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("seeding groups: %v", err)
		}
	}
}

// listed runs ListGroups to its end and returns "<stream> <group>" for each group, sorted; the
// test fails on an error.
func listed(t testing.TB, c *valkey.Client, opts valkey.ListOptions) []string {
	t.Helper()
	var found []string
	for g, err := range c.ListGroups(t.Context(), opts) {
		if err != nil {
			t.Fatalf("ListGroups(%+v) after %d groups: stream %q: %v", opts, len(found), g.Stream, err)
		}
		found = append(found, g.Stream+" "+g.Name)
	}
	slices.Sort(found)
	return found
}

// pairs is "<stream> <group>" for every group on every stream, sorted, as listed returns them.
func pairs(streams []string, groups ...string) []string {
	var all []string
	for _, s := range streams {
		for _, g := range groups {
			all = append(all, s+" "+g)
		}
	}
	slices.Sort(all)
	return all
}

func TestListGroups_NamedStreamsReadOnceMissingAndOtherTypesYieldNothing(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	other, missing, text := stream+"/eu", stream+":missing", stream+":text"
	seedGroups(t, rdb, []string{stream}, "billing", "team/audit")
	seedGroups(t, rdb, []string{other}, "billing")
	if err := rdb.Set(ctx, text, "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}

	got := listed(t, c, valkey.ListOptions{Streams: []string{stream, missing, text, other, stream}})
	want := []string{stream + " billing", stream + " team/audit", other + " billing"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("listed %q, want %q", got, want)
	}
	if rdb.Exists(ctx, missing).Val() != 0 {
		t.Errorf("listing created %s", missing)
	}
}

func TestListGroups_ReportsWhatXinfoGroupsReports(t *testing.T) {
	t.Parallel()
	ctx, c, rdb, stream := fixture(t)
	valkeytest.SeedGroupWithConsumers(t, rdb, stream)
	want := serverGroups(t, rdb, stream)
	var got []valkey.ListedGroup
	for g, err := range c.ListGroups(ctx, valkey.ListOptions{Streams: []string{stream}}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, g)
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("listed %d groups, the server reports %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Stream != stream || g.Name != w.Name || g.Consumers != w.Consumers || g.Pending != w.Pending || g.LastDeliveredID != w.LastDeliveredID {
			t.Errorf("listed %+v, the server reports %+v", g, w)
		}
	}
}

// TestListGroups_MatchReadsOnlyStreamsOfThePattern: keys that share the pattern's prefix
// without matching it, keys of other types that match it, and streams elsewhere are never read.
func TestListGroups_MatchReadsOnlyStreamsOfThePattern(t *testing.T) {
	t.Parallel()
	ctx, c, rdb := ownServer(t) // its own, so that its command counts are this test's
	prefix := key(t, "")
	orders := []string{prefix + "orders:1", prefix + "orders:2/eu", prefix + "orders:3"}
	seedGroups(t, rdb, orders, "billing", "team/audit")
	seedGroups(t, rdb, []string{prefix + "ordersX", prefix + "payments:1"}, "billing")
	if err := rdb.HSet(ctx, prefix+"orders:hash", "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, prefix+"orders:text", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	valkeytest.XAdd(t, rdb, prefix+"orders:nogroups", "1-0")

	rdb.ConfigResetStat(ctx)
	got := listed(t, c, valkey.ListOptions{Match: prefix + "orders:*", PageSize: 2})
	if want := pairs(orders, "billing", "team/audit"); !slices.Equal(got, want) {
		t.Errorf("listed %q, want %q", got, want)
	}
	// SCAN ... TYPE stream filters on the server: the hash and the string are never asked.
	if n := valkeytest.CommandCalls(t, rdb, "xinfo|groups"); n != len(orders)+1 {
		t.Errorf("XINFO GROUPS ran %d times, want one per stream of the pattern (%d)", n, len(orders)+1)
	}
}

// TestListGroups_OnePipelinePerPage counts round trips on the wire: SCAN pages, and one
// XINFO GROUPS pipeline per page of streams, never one round trip per stream.
func TestListGroups_OnePipelinePerPage(t *testing.T) {
	t.Parallel()
	proxy := faultproxy.StartProxyT(t, server(t).Addr())
	c := newClient(t, valkey.Options{URL: "valkey://" + proxy.Addr() + "/0"})
	rdb := adminClient(t)
	prefix := key(t, "")
	streams := make([]string, 250)
	for i := range streams {
		streams[i] = fmt.Sprintf("%sorders:%d", prefix, i)
	}
	seedGroups(t, rdb, streams, "a", "b", "c")

	named := listed(t, c, valkey.ListOptions{Streams: streams, PageSize: 100})
	matched := listed(t, c, valkey.ListOptions{Match: prefix + "orders:*", PageSize: 100})
	want := pairs(streams, "a", "b", "c")
	if !slices.Equal(named, want) || !slices.Equal(matched, want) {
		t.Fatalf("listed %d groups by name and %d by pattern, want %d each", len(named), len(matched), len(want))
	}
	_ = c.Close() // the proxy counts a connection's last round trip when it ends
	trips, _ := proxy.Take()
	scans, pipelines, reads := 0, 0, 0
	for carried, n := range trips {
		switch {
		case carried == "SCAN":
			scans += int(n)
		case strings.HasPrefix(carried, "XINFO GROUPS"):
			if strings.Count(carried, " + ")+1 != strings.Count(carried, "XINFO GROUPS") {
				t.Errorf("a round trip carried %q", carried)
			}
			pipelines += int(n)
			reads += int(n) * strings.Count(carried, "XINFO GROUPS")
		}
	}
	// 3 pages by name; by pattern, at most one pipeline per SCAN page that found streams.
	if reads != 2*len(streams) || pipelines > 3+scans || scans == 0 {
		t.Errorf("%d SCAN round trips, %d XINFO GROUPS pipelines carrying %d reads; want 3 pipelines by name, "+
			"at most one per SCAN page by pattern, and each stream read once per listing (%d)", scans, pipelines, reads, 2*len(streams))
	}
}

func TestListGroups_StopsWhenTheCallerStops(t *testing.T) {
	t.Parallel()
	// A server of its own: on the shared one, a SCAN page may hold only other tests' keys, and
	// the listing rightly reads on to the next page.
	srv := valkeytest.StartT(t)
	proxy := faultproxy.StartProxyT(t, srv.Addr())
	c := newClient(t, valkey.Options{URL: "valkey://" + proxy.Addr() + "/0"})
	prefix := key(t, "")
	streams := make([]string, 50)
	for i := range streams {
		streams[i] = fmt.Sprintf("%sorders:%d", prefix, i)
	}
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	seedGroups(t, admin, streams, "a", "b")

	for _, opts := range []valkey.ListOptions{{Streams: streams, PageSize: 10}, {Match: prefix + "*", PageSize: 10}} {
		for _, err := range c.ListGroups(t.Context(), opts) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	_ = c.Close()
	trips, _ := proxy.Take()
	pipelines := 0
	for carried, n := range trips {
		if strings.HasPrefix(carried, "XINFO GROUPS") {
			pipelines += int(n)
		}
	}
	if pipelines != 2 || trips["SCAN"] != 1 {
		t.Errorf("after the first group of each listing, the server saw %v; want one page read by each listing and one SCAN", trips)
	}
}

func TestListGroups_UnreachableEndsTheListingWithATypedError(t *testing.T) {
	t.Parallel()
	c := newClient(t, valkey.Options{URL: "valkey://127.0.0.1:1/0", MaxRetries: new(0)})
	for _, tc := range []struct {
		opts   valkey.ListOptions
		stream string
	}{
		{valkey.ListOptions{Streams: []string{"orders", "payments"}}, "orders"},
		{valkey.ListOptions{Match: "orders:*"}, ""},
	} {
		n := 0
		for g, err := range c.ListGroups(t.Context(), tc.opts) {
			n++
			var unreachable *valkey.UnreachableError
			if !errors.As(err, &unreachable) || unreachable.Addr != "127.0.0.1:1" || unreachable.Cause() != valkey.CauseRefused {
				t.Errorf("ListGroups(%+v) yielded %+v, %v; want an UnreachableError for 127.0.0.1:1", tc.opts, g, err)
			}
			if g.Stream != tc.stream {
				t.Errorf("the error names stream %q, want %q", g.Stream, tc.stream)
			}
		}
		if n != 1 {
			t.Errorf("ListGroups(%+v) yielded %d times, want one error", tc.opts, n)
		}
	}
}

func TestListGroups_RefusedIsTheServersWords(t *testing.T) {
	t.Parallel()
	_, _, rdb, stream := fixture(t)
	seedGroups(t, rdb, []string{stream}, "billing")
	user, pw := server(t).ACLUser(t, valkeytest.TagPattern(stream), "+scan")
	c := newClient(t, valkey.Options{Username: user, Password: pw})
	for g, err := range c.ListGroups(t.Context(), valkey.ListOptions{Match: valkeytest.TagPattern(stream)}) {
		var refused *valkey.RefusedError
		if !errors.As(err, &refused) || refused.Code() != "NOPERM" || refused.Key != stream || refused.Command != "XINFO GROUPS" || g.Stream != stream {
			t.Errorf("yielded %+v, %v; want NOPERM for XINFO GROUPS on %s", g, err, stream)
		}
	}
}

// TestListGroups_ClusterScansEveryPrimary: streams on every primary are found by pattern, and
// named streams on different primaries are read too.
func TestListGroups_ClusterScansEveryPrimary(t *testing.T) {
	t.Parallel()
	cluster := valkeytest.StartClusterT(t, 3, 0)
	admin := cluster.Client()
	t.Cleanup(func() { _ = admin.Close() })
	c := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs()[:1]})
	streams := make([]string, 30)
	for i := range streams {
		streams[i] = fmt.Sprintf("orders:{%d}:stream/main", i) // 30 hash tags, spread over the slots
	}
	seedGroups(t, admin, streams, "billing", "team/audit")
	if err := admin.Set(t.Context(), "orders:{x}:text", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	owners := map[string]bool{}
	for _, s := range streams {
		owner, err := cluster.Owner(t.Context(), slotOf(t, cluster, s))
		if err != nil {
			t.Fatal(err)
		}
		owners[owner.Addr()] = true
	}
	if len(owners) != 3 {
		t.Fatalf("the streams live on %d primaries; the test needs all 3", len(owners))
	}

	want := pairs(streams, "billing", "team/audit")
	if got := listed(t, c, valkey.ListOptions{Match: "orders:*", PageSize: 4}); !slices.Equal(got, want) {
		t.Errorf("listed by pattern %q, want %q", got, want)
	}
	if got := listed(t, c, valkey.ListOptions{Streams: slices.Concat(streams, []string{"orders:{x}:text"}), PageSize: 7}); !slices.Equal(got, want) {
		t.Errorf("listed by name %q, want %q", got, want)
	}
}

// TestListGroups_TenThousandStreams lists 10,000 streams with 3 groups each by pattern, the
// size `terraform query` is promised to handle, and reports wall time, round trips and heap. It fails when a stream costs a
// round trip of its own, when a group is missed, or when what the listing holds grows by more
// than a hash per stream between 2,500 and 10,000 streams. make bench reports the provider's
// figures.
func TestListGroups_TenThousandStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 10,000 streams")
	}
	// Not parallel: the heap it measures is the test binary's, so no other test may run meanwhile.
	srv := valkeytest.StartT(t)
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	proxy := faultproxy.StartProxyT(t, srv.Addr())
	heaps := map[int]uint64{}
	var streams []string
	for _, n := range []int{2500, 10000} {
		seeded := len(streams)
		for i := seeded; i < n; i++ {
			streams = append(streams, fmt.Sprintf("emq:{tenant-%05d}:stream/main", i))
		}
		seedGroups(t, admin, streams[seeded:], "billing", "audit", "team/search")
		c := newClient(t, valkey.Options{URL: "valkey://" + proxy.Addr() + "/0"})

		base := liveHeap() // the test's own keys and the seeding stay out of the figure
		start := time.Now()
		groups, peak := 0, uint64(0)
		for _, err := range c.ListGroups(t.Context(), valkey.ListOptions{Match: "emq:{tenant-*}:stream/main"}) {
			if err != nil {
				t.Fatal(err)
			}
			if groups++; groups%1500 == 0 {
				if h := liveHeap(); h > base {
					peak = max(peak, h-base)
				}
			}
		}
		elapsed := time.Since(start)
		_ = c.Close()
		trips, _ := proxy.Take()
		scans, pipelines := 0, 0
		for carried, k := range trips {
			switch {
			case carried == "SCAN":
				scans += int(k)
			case strings.HasPrefix(carried, "XINFO GROUPS"):
				pipelines += int(k)
			}
		}
		heaps[n] = peak
		t.Logf("%d streams, %d groups by pattern: %v; %d SCAN round trips, %d XINFO GROUPS pipelines; the listing held at most %.0f KiB",
			n, groups, elapsed.Round(time.Millisecond), scans, pipelines, float64(peak)/(1<<10))
		if groups != 3*n {
			t.Errorf("listed %d groups, want %d", groups, 3*n)
		}
		if pipelines > scans || pipelines > n/100 {
			t.Errorf("%d XINFO GROUPS pipelines for %d streams in %d SCAN pages; want at most one per page and per 100 streams",
				pipelines, n, scans)
		}
	}
	// The listing keeps a 64-bit hash per stream, never the streams or their groups, which would
	// cost hundreds of bytes each. The bound, 64 bytes a stream, is about twice what a hash
	// costs in a Go map (8 bytes of key, a control byte, and the load factor's slack), so it
	// holds wherever the map's growth falls.
	if grew := int64(heaps[10000]) - int64(heaps[2500]); grew > 64*7500 {
		t.Errorf("what the listing holds grew by %d bytes from 2,500 to 10,000 streams (%.0f a stream); it holds more than a page and a hash per stream",
			grew, float64(grew)/7500)
	}
}

// liveHeap is the heap still in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkListGroups lists 10,000 streams with 3 groups each by pattern, through a proxy that
// counts round trips; make bench drives ListGroups the same way.
func BenchmarkListGroups(b *testing.B) {
	srv := valkeytest.StartT(b)
	admin := srv.Client()
	b.Cleanup(func() { _ = admin.Close() })
	streams := make([]string, 10000)
	for i := range streams {
		streams[i] = fmt.Sprintf("emq:{tenant-%05d}:stream/main", i)
	}
	seedGroups(b, admin, streams, "billing", "audit", "team/search")
	proxy := faultproxy.StartProxyT(b, srv.Addr())
	c := newClient(b, valkey.Options{URL: "valkey://" + proxy.Addr() + "/0"})
	b.ReportAllocs()
	for b.Loop() {
		groups := 0
		for _, err := range c.ListGroups(b.Context(), valkey.ListOptions{Match: "emq:{tenant-*}:stream/main"}) {
			if err != nil {
				b.Fatal(err)
			}
			groups++
		}
		if groups != 3*len(streams) {
			b.Fatalf("listed %d groups, want %d", groups, 3*len(streams))
		}
	}
	_ = c.Close()
	trips, _ := proxy.Take()
	total := int64(0)
	for _, n := range trips {
		total += n
	}
	b.ReportMetric(float64(total)/float64(b.N), "roundtrips/op")
}
