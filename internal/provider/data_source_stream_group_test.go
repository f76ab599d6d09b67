package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

const dataGroupAddress = "data.valkey_stream_group.test"

// groupFromServer is what XINFO GROUPS and XINFO CONSUMERS report for the group, as the data
// source's attributes.
func groupFromServer(t *testing.T, rdb *redis.Client, stream, name string) map[string]knownvalue.Check {
	t.Helper()
	for _, g := range valkeytest.XInfoGroups(t, rdb, stream) {
		if g["name"] != name {
			continue
		}
		consumers, err := rdb.XInfoConsumers(context.Background(), stream, name).Result()
		if err != nil {
			t.Fatal(err)
		}
		list := make([]knownvalue.Check, len(consumers))
		for i, c := range consumers {
			list[i] = knownvalue.ObjectExact(map[string]knownvalue.Check{
				"name": knownvalue.StringExact(c.Name), "pending": knownvalue.Int64Exact(c.Pending), "idle_ms": knownvalue.Int64Func(idleRecently),
			})
		}
		return map[string]knownvalue.Check{
			"consumers": known(g["consumers"]), "pending": known(g["pending"]), "last_delivered_id": known(g["last-delivered-id"]),
			"entries_read": known(g["entries-read"]), "lag": known(g["lag"]), "consumer": knownvalue.ListExact(list),
		}
	}
	t.Fatalf("group %q is not on stream %q", name, stream)
	return nil
}

// idleRecently accepts an idle time of a consumer that was active during the test.
func idleRecently(ms int64) error {
	if ms < 0 || ms > 60_000 {
		return fmt.Errorf("idle_ms = %d, want between 0 and 60000 for a consumer active during the test", ms)
	}
	return nil
}

func TestAccStreamGroupDataSource_matchesServer(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	valkeytest.SeedGroupWithConsumers(t, rdb, stream)
	config := acctest.StreamGroupDataSourceConfig(stream, "billing")
	testAccReadDataSource(t, config, dataGroupAddress, groupFromServer(t, rdb, stream, "billing"),
		statecheck.ExpectKnownValue(dataGroupAddress, tfjsonpath.New("lag"), knownvalue.Int64Exact(2)))
	// The data source follows the server: two more entries raise the lag on the next read.
	valkeytest.XAdd(t, rdb, stream, "6-1", "7-1")
	testAccReadDataSource(t, config, dataGroupAddress, groupFromServer(t, rdb, stream, "billing"),
		statecheck.ExpectKnownValue(dataGroupAddress, tfjsonpath.New("lag"), knownvalue.Int64Exact(4)))
}

func TestAccStreamGroupDataSource_nullLagWhereServerReportsNone(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	valkeytest.SeedGroupWithUnknownLag(t, rdb, stream)
	testAccReadDataSource(t, acctest.StreamGroupDataSourceConfig(stream, "midway"), dataGroupAddress, groupFromServer(t, rdb, stream, "midway"),
		statecheck.ExpectKnownValue(dataGroupAddress, tfjsonpath.New("lag"), knownvalue.Null()))
}

func TestAccStreamGroupDataSource_readsGroupDeclaredInSameConfig(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	// What XINFO GROUPS reports for a group just created on a new stream.
	testAccReadDataSource(t, acctest.StreamGroupConfig(stream, "billing", "new")+`
data "valkey_stream_group" "test" {
  stream = valkey_stream_group.test.stream
  name   = valkey_stream_group.test.name
}
`, dataGroupAddress, map[string]knownvalue.Check{
		"consumers": knownvalue.Int64Exact(0), "pending": knownvalue.Int64Exact(0), "last_delivered_id": knownvalue.StringExact("0-0"),
		"entries_read": knownvalue.Null(), "lag": knownvalue.Int64Exact(0), "consumer": knownvalue.ListSizeExact(0),
	})
}
