package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// harnessCommands are the harness's own commands, left out of the counts.
var harnessCommands = map[string]bool{"config|resetstat": true, "info": true, "flushall": true}

// commandStats reads INFO commandstats into command -> calls, without the harness's own.
func commandStats(ctx context.Context, rdb *redis.Client) (map[string]int64, error) {
	raw, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	stats := map[string]int64{}
	for line := range strings.SplitSeq(raw, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") || harnessCommands[name] {
			continue
		}
		for field := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				stats[name] = n
			}
		}
	}
	return stats, nil
}
