package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

const dataStreamAddress = "data.valkey_stream.test"

// streamFromServer is what XINFO STREAM and XINFO GROUPS report for key, as the data source's
// attributes.
func streamFromServer(t *testing.T, rdb *redis.Client, key string) map[string]knownvalue.Check {
	t.Helper()
	info, err := rdb.XInfoStream(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var groups []knownvalue.Check
	for _, g := range valkeytest.XInfoGroups(t, rdb, key) {
		groups = append(groups, known(g["name"]))
	}
	entryID := func(id string) knownvalue.Check {
		if id == "" {
			return knownvalue.Null()
		}
		return knownvalue.StringExact(id)
	}
	return map[string]knownvalue.Check{
		"length":               knownvalue.Int64Exact(info.Length),
		"first_entry_id":       entryID(info.FirstEntry.ID),
		"last_entry_id":        entryID(info.LastEntry.ID),
		"last_generated_id":    knownvalue.StringExact(info.LastGeneratedID),
		"entries_added":        knownvalue.Int64Exact(info.EntriesAdded),
		"max_deleted_entry_id": knownvalue.StringExact(info.MaxDeletedEntryID),
		"groups":               knownvalue.ListExact(groups),
	}
}

func TestAccStreamDataSource_matchesServer(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	valkeytest.SeedStreamWithGaps(t, rdb, stream)
	testAccReadDataSource(t, acctest.StreamDataSourceConfig(stream), dataStreamAddress, streamFromServer(t, rdb, stream))
}

func TestAccStreamDataSource_emptyStreamHasNullEntryIDs(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	if err := rdb.XGroupCreateMkStream(context.Background(), stream, "billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	testAccReadDataSource(t, acctest.StreamDataSourceConfig(stream), dataStreamAddress, streamFromServer(t, rdb, stream),
		statecheck.ExpectKnownValue(dataStreamAddress, tfjsonpath.New("first_entry_id"), knownvalue.Null()),
		statecheck.ExpectKnownValue(dataStreamAddress, tfjsonpath.New("last_entry_id"), knownvalue.Null()))
}

// TestAccDataSources_errors reads each data source where it finds nothing to read.
func TestAccDataSources_errors(t *testing.T) {
	t.Parallel()
	ctx, rdb := context.Background(), acctest.Admin(t, acctest.Server(t))
	group := func(name string) func(string) string {
		return func(stream string) string { return acctest.StreamGroupDataSourceConfig(stream, name) }
	}
	for _, tc := range []struct {
		name   string
		seed   func(key string)
		config func(key string) string
		want   string
	}{
		{"stream missing", func(string) {}, acctest.StreamDataSourceConfig, `(?s)Stream Not Found.*Stream\s+".*"\s+does\s+not\s+exist`},
		{"stream wrong type", func(k string) { rdb.ZAdd(ctx, k, redis.Z{Score: 1, Member: "x"}) }, acctest.StreamDataSourceConfig,
			`(?s)Stream Not Read.*holds\s+a\s+zset,\s+not\s+a\s+stream`},
		{"group on missing stream", func(string) {}, group("billing"),
			`(?s)Consumer Group Not Found.*Stream\s+".*"\s+does\s+not\s+exist.*has\s+no\s+consumer\s+group\s+"billing"`},
		{"group missing", func(s string) { rdb.XGroupCreateMkStream(ctx, s, "other", "$") }, group("billing"),
			`(?s)Consumer Group Not Found.*has\s+no\s+consumer\s+group\s+"billing"`},
		{"group on wrong type", func(s string) { rdb.RPush(ctx, s, "x") }, group("billing"), `(?s)Consumer Group Not Read.*holds\s+a\s+list,\s+not\s+a\s+stream`},
		{"group with empty name", func(string) {}, group(""), `(?s)Attribute name string length must be at least 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream := acctest.StreamKey(t)
			tc.seed(stream)
			testAccExpectError(t, acctest.ProviderConfig(acctest.Server(t))+tc.config(stream), tc.want)
		})
	}
}

func TestAccStreamDataSource_unreachableNamesAddress(t *testing.T) {
	t.Parallel()
	testAccExpectError(t, "provider \"valkey\" {\n  url = \"valkey://127.0.0.1:1/0\"\n}\n"+acctest.StreamDataSourceConfig("s"),
		`(?s)Stream Not Read.*127\.0\.0\.1:1.*working\s+on\s+stream\s+"s"`)
}
