package valkeytest

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Info is one INFO section as field -> value, such as "role" -> "master" or
// "cmdstat_xgroup|create" -> "calls=3,usec=…". go-redis parses the reply: this is the one INFO
// parser of the tests.
func Info(ctx context.Context, rdb redis.UniversalClient, section string) (map[string]string, error) {
	sections, err := rdb.InfoMap(ctx, section).Result()
	fields := map[string]string{}
	for _, s := range sections {
		maps.Copy(fields, s)
	}
	return fields, err
}

// InfoField is one field of an INFO section; the test fails when the server does not report it.
func InfoField(tb testing.TB, rdb redis.UniversalClient, section, field string) string {
	tb.Helper()
	info, err := Info(context.Background(), rdb, section)
	value, ok := info[field]
	if err != nil || !ok {
		tb.Fatalf("INFO %s reports no %s (err %v)", section, field, err)
	}
	return value
}

// CommandStats is INFO commandstats as command ("xgroup|create") -> calls since the server
// started or its last CONFIG RESETSTAT.
func CommandStats(ctx context.Context, rdb redis.UniversalClient) (map[string]int64, error) {
	info, err := Info(ctx, rdb, "commandstats")
	if err != nil {
		return nil, err
	}
	stats := map[string]int64{}
	for field, value := range info {
		command, ok := strings.CutPrefix(field, "cmdstat_")
		if !ok {
			continue
		}
		for stat := range strings.SplitSeq(value, ",") {
			if calls, ok := strings.CutPrefix(stat, "calls="); ok {
				stats[command], _ = strconv.ParseInt(calls, 10, 64)
			}
		}
	}
	return stats, nil
}

// CommandCalls is how many times the server ran command ("xgroup|create") since it started or
// its last CONFIG RESETSTAT, from INFO commandstats: 0 when it has not run it.
func CommandCalls(tb testing.TB, rdb redis.UniversalClient, command string) int {
	tb.Helper()
	stats, err := CommandStats(context.Background(), rdb)
	if err != nil {
		tb.Fatalf("INFO commandstats: %v", err)
	}
	return int(stats[command])
}

// info is Info for the package's own waits, which retry: an error reads as no fields.
func (s *Server) info(section string) map[string]string {
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	info, _ := Info(context.Background(), rdb, section)
	return info
}

// WaitLoaded waits until the server rdb talks to has loaded its dataset (INFO persistence
// loading:0): a restarted server answers PING, or NOAUTH, before it serves data commands.
func WaitLoaded(tb testing.TB, rdb redis.UniversalClient) {
	tb.Helper()
	var info map[string]string
	var err error
	if waitFor(30*time.Second, func() bool {
		info, err = Info(context.Background(), rdb, "persistence")
		return err == nil && info["loading"] == "0"
	}) != nil {
		tb.Fatalf("the server did not finish loading within 30s (loading=%q, err %v)", info["loading"], err)
	}
}
