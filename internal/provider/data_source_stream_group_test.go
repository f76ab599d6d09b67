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

func testAccStreamGroupDataSourceConfig(stream, name string) string {
	return fmt.Sprintf(`
data "valkey_stream_group" "test" {
  stream = %[1]q
  name   = %[2]q
}
`, stream, name)
}

// checkMatchesServer compares attributes of one data source in state with what fetch reads
// from the server at check time. A nil in the map means the attribute must be null.
func checkMatchesServer(address string, fetch func() (map[string]any, error)) statecheck.StateCheck {
	return serverCheckWithState(func(req statecheck.CheckStateRequest) error {
		if req.State == nil || req.State.Values == nil {
			return fmt.Errorf("no state to compare with the server")
		}
		want, err := fetch()
		if err != nil {
			return err
		}
		for _, r := range req.State.Values.RootModule.Resources {
			if r.Address != address {
				continue
			}
			for attr, server := range want {
				if got := fmt.Sprint(r.AttributeValues[attr]); got != fmt.Sprint(server) {
					return fmt.Errorf("%s.%s = %s, the server reports %v", address, attr, got, server)
				}
			}
			return nil
		}
		return fmt.Errorf("%s is not in state", address)
	})
}

type serverCheckWithState func(statecheck.CheckStateRequest) error

func (c serverCheckWithState) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c(req)
}

// serverGroupValues is what XINFO GROUPS reports for the group, keyed like the data source.
func serverGroupValues(rdb *redis.Client, stream, name string) (map[string]any, error) {
	raw, err := rdb.Do(context.Background(), "XINFO", "GROUPS", stream).Slice()
	if err != nil {
		return nil, err
	}
	for _, row := range raw {
		fields := map[string]any{}
		list, _ := row.([]any)
		for i := 0; i+1 < len(list); i += 2 {
			field, _ := list[i].(string)
			fields[field] = list[i+1]
		}
		if fields["name"] != name {
			continue
		}
		return map[string]any{
			"consumers":         fields["consumers"],
			"pending":           fields["pending"],
			"last_delivered_id": fields["last-delivered-id"],
			"entries_read":      fields["entries-read"],
			"lag":               fields["lag"],
		}, nil
	}
	return nil, fmt.Errorf("group %q is not on stream %q", name, stream)
}

func TestAccStreamGroupDataSource_matchesServer(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	const address = "data.valkey_stream_group.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				for _, id := range []string{"1-1", "2-1", "3-1", "4-1", "5-1"} {
					rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: id, Values: []string{"order", id}})
				}
				rdb.XGroupCreate(ctx, stream, "billing", "0")
				rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "alice", Streams: []string{stream, ">"}, Count: 2})
				rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "bob", Streams: []string{stream, ">"}, Count: 1})
				rdb.XAck(ctx, stream, "billing", "1-1")
				rdb.XGroupCreate(ctx, stream, "audit", "$") // a second group the data source must not mix in
			},
			Config: testAccProviderConfig(testServer(t)) + testAccStreamGroupDataSourceConfig(stream, "billing"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("consumers"), knownvalue.Int64Exact(2)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("pending"), knownvalue.Int64Exact(2)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("last_delivered_id"), knownvalue.StringExact("3-1")),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("entries_read"), knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("lag"), knownvalue.Int64Exact(2)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("consumer"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectExact(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("alice"), "pending": knownvalue.Int64Exact(1),
						"idle_ms": knownvalue.Int64Func(idleRecently),
					}),
					knownvalue.ObjectExact(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("bob"), "pending": knownvalue.Int64Exact(1),
						"idle_ms": knownvalue.Int64Func(idleRecently),
					}),
				})),
				checkMatchesServer(address, func() (map[string]any, error) { return serverGroupValues(rdb, stream, "billing") }),
			},
		}, {
			// The data source follows the server: two more entries raise the lag on the next read.
			PreConfig: func() {
				rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: "6-1", Values: []string{"order", "6"}})
				rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: "7-1", Values: []string{"order", "7"}})
			},
			Config: testAccProviderConfig(testServer(t)) + testAccStreamGroupDataSourceConfig(stream, "billing"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("lag"), knownvalue.Int64Exact(4)),
				checkMatchesServer(address, func() (map[string]any, error) { return serverGroupValues(rdb, stream, "billing") }),
			},
		}},
	})
}

// idleRecently accepts an idle time of a consumer that was active during the test.
func idleRecently(ms int64) error {
	if ms < 0 || ms > 60_000 {
		return fmt.Errorf("idle_ms = %d, want between 0 and 60000 for a consumer active during the test", ms)
	}
	return nil
}

func TestAccStreamGroupDataSource_nullLagWhereServerReportsNone(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	const address = "data.valkey_stream_group.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				for _, id := range []string{"1-1", "2-1", "3-1"} {
					rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: id, Values: []string{"k", "v"}})
				}
				// A deletion inside the group's unread range leaves the server unable to compute lag.
				rdb.XGroupCreate(ctx, stream, "midway", "1-1")
				rdb.XDel(ctx, stream, "2-1")
			},
			Config: testAccProviderConfig(testServer(t)) + testAccStreamGroupDataSourceConfig(stream, "midway"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("lag"), knownvalue.Null()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("consumers"), knownvalue.Int64Exact(0)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("consumer"), knownvalue.ListSizeExact(0)),
				checkMatchesServer(address, func() (map[string]any, error) {
					values, err := serverGroupValues(rdb, stream, "midway")
					if err == nil && values["lag"] != nil {
						err = fmt.Errorf("test setup: the server reports lag %v, want none", values["lag"])
					}
					return values, err
				}),
			},
		}},
	})
}

func TestAccStreamGroupDataSource_readsGroupDeclaredInSameConfig(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	const address = "data.valkey_stream_group.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccProviderConfig(testServer(t)) + testAccStreamGroupConfig(stream, "billing", "new") + `
data "valkey_stream_group" "test" {
  stream = valkey_stream_group.test.stream
  name   = valkey_stream_group.test.name
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("last_delivered_id"), knownvalue.StringExact("0-0")),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("lag"), knownvalue.Int64Exact(0)),
				checkMatchesServer(address, func() (map[string]any, error) { return serverGroupValues(rdb, stream, "billing") }),
			},
		}},
	})
}

func TestAccStreamGroupDataSource_errors(t *testing.T) {
	t.Parallel()
	ctx, rdb := context.Background(), testAdmin(t, testServer(t))
	for _, tc := range []struct {
		name  string
		seed  func(stream string)
		group string
		want  string
	}{
		{"missing stream", func(string) {}, "billing",
			`(?s)Consumer Group Not Found.*Stream\s+".*"\s+does\s+not\s+exist.*has\s+no\s+consumer\s+group\s+"billing"`},
		{"missing group", func(s string) { rdb.XGroupCreateMkStream(ctx, s, "other", "$") }, "billing",
			`(?s)Consumer Group Not Found.*has\s+no\s+consumer\s+group\s+"billing"`},
		{"wrong type", func(s string) { rdb.RPush(ctx, s, "x") }, "billing", `(?s)Consumer Group Not Read.*holds\s+a\s+list,\s+not\s+a\s+stream`},
		{"empty name", func(string) {}, "", `(?s)Attribute name string length must be at least 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream := testKey(t)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					PreConfig:   func() { tc.seed(stream) },
					Config:      testAccProviderConfig(testServer(t)) + testAccStreamGroupDataSourceConfig(stream, tc.group),
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}
