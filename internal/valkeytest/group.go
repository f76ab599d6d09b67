package valkeytest

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What a test asks the server about a consumer group.

// Group is the group as XINFO GROUPS reports it, or ok=false when the stream or the group is
// not there.
func Group(rdb redis.UniversalClient, stream, name string) (redis.XInfoGroup, bool, error) {
	groups, err := rdb.XInfoGroups(context.Background(), stream).Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return redis.XInfoGroup{}, false, nil
		}
		return redis.XInfoGroup{}, false, err
	}
	for _, g := range groups {
		if g.Name == name {
			return g, true, nil
		}
	}
	return redis.XInfoGroup{}, false, nil
}

// CheckGroup is an error unless the group is on the server.
func CheckGroup(rdb redis.UniversalClient, stream, name string) error {
	_, ok, err := Group(rdb, stream, name)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("group %q is not on stream %q", name, stream)
	}
	return nil
}
