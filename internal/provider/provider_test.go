package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/pluginserver"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"valkey": pluginserver.NewProtocol6WithError(New("test")()),
}

// keyExists reports whether key is on the server; it fails the test when the server cannot say.
func keyExists(t *testing.T, rdb *redis.Client, key string) bool {
	t.Helper()
	n, err := rdb.Exists(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("EXISTS %s: %v", key, err)
	}
	return n != 0
}

// expectAttributes expects each attribute of the resource or data source at address to hold
// its value in want. Where state should hold what the server reports, tests use it with values
// read from the server, not acctest.CheckServer.
func expectAttributes(address string, want map[string]knownvalue.Check) []statecheck.StateCheck {
	var checks []statecheck.StateCheck
	for _, attr := range slices.Sorted(maps.Keys(want)) {
		checks = append(checks, statecheck.ExpectKnownValue(address, tfjsonpath.New(attr), want[attr]))
	}
	return checks
}

// known is the check for a value as the server sent it: an integer, a string, or nil (null).
func known(v any) knownvalue.Check {
	switch v := v.(type) {
	case nil:
		return knownvalue.Null()
	case int64:
		return knownvalue.Int64Exact(v)
	case string:
		return knownvalue.StringExact(v)
	}
	return knownvalue.StringExact(fmt.Sprintf("a value of the unexpected type %T", v))
}

// testAccExpectError applies config in one step that must fail with an error matching want.
func testAccExpectError(t *testing.T, config, want string) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    []resource.TestStep{{Config: config, ExpectError: regexp.MustCompile(want)}},
	})
}

// testAccReadDataSource reads the data source at address, declared in config, from the shared
// server in one step, and expects its attributes to hold want (most tests read it from the
// server first) and the checks in more.
func testAccReadDataSource(t *testing.T, config, address string, want map[string]knownvalue.Check, more ...statecheck.StateCheck) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:            acctest.ProviderConfig(acctest.Server(t)) + config,
			ConfigStateChecks: append(expectAttributes(address, want), more...),
		}},
	})
}

// connectionsReceived is the server's total_connections_received.
func connectionsReceived(t *testing.T, admin *redis.Client) string {
	return valkeytest.InfoField(t, admin, "stats", "total_connections_received")
}

func TestAccProvider_ConfigureDialsNothing(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := acctest.Admin(t, srv)
	before := connectionsReceived(t, admin)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			// The provider is configured (its resource is planned), but the stream is not known
			// until apply, so nothing needs the server: Configure must not dial on its own.
			Config: acctest.ProviderConfig(srv) + `
resource "terraform_data" "stream" {
  input = "emq:{later}:stream"
}

resource "valkey_stream_group" "test" {
  stream      = terraform_data.stream.output
  name        = "billing"
  group_start = "new"
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
	if after := connectionsReceived(t, admin); after != before {
		t.Errorf("configuring the provider dialled the server: %s, then %s", before, after)
	}
}

func TestAccProvider_MalformedURLFailsAtPlan(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"http://127.0.0.1:6379", "127.0.0.1:6379", "valkey://", "valkey://127.0.0.1:6379/notadb"} {
		t.Run(url, func(t *testing.T) {
			t.Parallel()
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: fmt.Sprintf(`provider "valkey" {
  url = %q
}
%s`, url, acctest.StreamGroupConfig("s", "g", "new")),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)Invalid Valkey URL.*url.*accepted\s+forms:\s+valkey://`),
				}},
			})
		})
	}
}

func TestAccProvider_URLFromEnvironment(t *testing.T) {
	// t.Setenv: not parallel.
	stream := acctest.StreamKey(t)
	t.Setenv(envOf("url"), acctest.Server(t).URL())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.StreamGroupConfig(stream, "from-env", "new"),
			ConfigStateChecks: []statecheck.StateCheck{
				acctest.CheckServer(func() error { return valkeytest.CheckGroup(acctest.Admin(t, acctest.Server(t)), stream, "from-env") }),
			},
		}},
	})
}

func TestAccProvider_AttributeOverridesEnvironment(t *testing.T) {
	stream := acctest.StreamKey(t)
	t.Setenv(envOf("url"), "valkey://127.0.0.1:1/0") // nothing listens there
	t.Setenv(envOf("password"), "not-needed")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf("provider \"valkey\" {\n  url = %q\n  password = \"\"\n}\n", acctest.Server(t).URL()) +
				acctest.StreamGroupConfig(stream, "from-attr", "new"),
			ConfigStateChecks: []statecheck.StateCheck{
				acctest.CheckServer(func() error { return valkeytest.CheckGroup(acctest.Admin(t, acctest.Server(t)), stream, "from-attr") }),
			},
		}},
	})
}
