package main

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// harnessCommands are the harness's own commands, left out of the counts.
var harnessCommands = map[string]bool{"config|resetstat": true, "info": true, "flushall": true}

// commandStats reads INFO commandstats into command -> calls, without the harness's own.
func commandStats(ctx context.Context, rdb *redis.Client) (map[string]int64, error) {
	stats, err := valkeytest.CommandStats(ctx, rdb)
	for name := range harnessCommands {
		delete(stats, name)
	}
	return stats, err
}
