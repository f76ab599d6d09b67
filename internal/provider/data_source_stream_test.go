package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/redis/go-redis/v9"
)

func testAccStreamDataSourceConfig(key string) string {
	return fmt.Sprintf(`
data "valkey_stream" "test" {
  key = %[1]q
}
`, key)
}

// serverStreamValues is what XINFO STREAM and XINFO GROUPS report, keyed like the data source.
func serverStreamValues(rdb *redis.Client, key string) (map[string]any, error) {
	ctx := context.Background()
	info, err := rdb.XInfoStream(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	groups, err := rdb.XInfoGroups(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	names := []any{}
	for _, g := range groups {
		names = append(names, g.Name)
	}
	entryID := func(id string) any {
		if id == "" {
			return nil
		}
		return id
	}
	return map[string]any{
		"length":               info.Length,
		"first_entry_id":       entryID(info.FirstEntry.ID),
		"last_entry_id":        entryID(info.LastEntry.ID),
		"last_generated_id":    info.LastGeneratedID,
		"entries_added":        info.EntriesAdded,
		"max_deleted_entry_id": info.MaxDeletedEntryID,
		"groups":               names,
	}, nil
}

func TestAccStreamDataSource_matchesServer(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	const address = "data.valkey_stream.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				for _, id := range []string{"1-1", "2-1", "3-1", "4-1", "5-1"} {
					rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: id, Values: []string{"order", id}})
				}
				rdb.XDel(ctx, stream, "1-1", "5-1")
				rdb.XGroupCreate(ctx, stream, "billing", "0")
				rdb.XGroupCreate(ctx, stream, "audit", "$")
			},
			Config: testAccProviderConfig(testServer(t)) + testAccStreamDataSourceConfig(stream),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("length"), knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("first_entry_id"), knownvalue.StringExact("2-1")),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("last_entry_id"), knownvalue.StringExact("4-1")),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("last_generated_id"), knownvalue.StringExact("5-1")),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("entries_added"), knownvalue.Int64Exact(5)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("max_deleted_entry_id"), knownvalue.StringExact("5-1")),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("groups"), knownvalue.SetExact([]knownvalue.Check{
					knownvalue.StringExact("billing"), knownvalue.StringExact("audit"),
				})),
				checkMatchesServer(address, func() (map[string]any, error) { return serverStreamValues(rdb, stream) }),
			},
		}},
	})
}

func TestAccStreamDataSource_emptyStreamHasNullEntryIDs(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	const address = "data.valkey_stream.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() { rdb.XGroupCreateMkStream(ctx, stream, "billing", "$") },
			Config:    testAccProviderConfig(testServer(t)) + testAccStreamDataSourceConfig(stream),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("length"), knownvalue.Int64Exact(0)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("first_entry_id"), knownvalue.Null()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("last_entry_id"), knownvalue.Null()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("last_generated_id"), knownvalue.StringExact("0-0")),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("groups"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("billing"),
				})),
				checkMatchesServer(address, func() (map[string]any, error) { return serverStreamValues(rdb, stream) }),
			},
		}},
	})
}

func TestAccStreamDataSource_errors(t *testing.T) {
	t.Parallel()
	ctx, rdb := context.Background(), testAdmin(t, testServer(t))
	for _, tc := range []struct {
		name string
		seed func(key string)
		want string
	}{
		{"missing", func(string) {}, `(?s)Stream Not Found.*Stream\s+".*"\s+does\s+not\s+exist`},
		{"wrong type", func(k string) { rdb.ZAdd(ctx, k, redis.Z{Score: 1, Member: "x"}) }, `(?s)Stream Not Read.*holds\s+a\s+zset,\s+not\s+a\s+stream`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream := testKey(t)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					PreConfig:   func() { tc.seed(stream) },
					Config:      testAccProviderConfig(testServer(t)) + testAccStreamDataSourceConfig(stream),
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

func TestAccStreamDataSource_unreachableNamesAddress(t *testing.T) {
	t.Parallel()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      "provider \"valkey\" {\n  url = \"valkey://127.0.0.1:1/0\"\n}\n" + testAccStreamDataSourceConfig("s"),
			ExpectError: regexp.MustCompile(`(?s)Stream Not Read.*127\.0\.0\.1:1.*working\s+on\s+stream\s+"s"`),
		}},
	})
}
