package systemtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/pluginserver"
	"github.com/echomq/terraform-provider-valkey/internal/provider"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// What the system tests share: the one server, the provider as terraform-plugin-testing serves
// it, configuration for the real CLI, and checks on the server. The tests see the provider as
// its users do, through Terraform (or OpenTofu) and the server.

// shared is the package's one server, started by the first test that needs it; each test
// works under its own key prefix.
var shared valkeytest.Shared

// testServer is the shared server. Without valkey-server installed the test skips.
func testServer(t testing.TB) *valkeytest.Server { return shared.Get(t) }

func TestMain(m *testing.M) { shared.Main(m, cliCleanup) }

var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"valkey": pluginserver.NewProtocol6WithError(provider.New("test")()),
}

// testAccProviderConfig points the provider at srv.
func testAccProviderConfig(srv *valkeytest.Server) string {
	return fmt.Sprintf("provider \"valkey\" {\n  url = %q\n}\n", srv.URL())
}

// testKey returns a stream key unique to the test, in the shape users write.
func testKey(t testing.TB) string { return valkeytest.Key(t, "emq:{%s}:stream/main") }

func testAdmin(t testing.TB, srv *valkeytest.Server) *redis.Client {
	t.Helper()
	c := srv.Client()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func testAccStreamGroupConfig(stream, name, start string) string {
	return testAccNamedGroupConfig("test", stream, name, start)
}

// testAccNamedGroupConfig declares valkey_stream_group.<resource>.
func testAccNamedGroupConfig(resource, stream, name, start string) string {
	return fmt.Sprintf(`
resource "valkey_stream_group" %[1]q {
  stream      = %[2]q
  name        = %[3]q
  group_start = %[4]q
}
`, resource, stream, name, start)
}

func testAccStreamGroupDataSourceConfig(stream, name string) string {
	return fmt.Sprintf("\ndata \"valkey_stream_group\" \"test\" {\n  stream = %q\n  name   = %q\n}\n", stream, name)
}

func testAccStreamDataSourceConfig(key string) string {
	return fmt.Sprintf("\ndata \"valkey_stream\" \"test\" {\n  key = %q\n}\n", key)
}

// entriesSeed is three entries whose IDs name known times; firstEntry is how a warning names
// the first.
var entriesSeed = []string{"1700000000000-0", "1700000000001-0", "1700000060000-5"}

const firstEntry = "from 1700000000000-0 (2023-11-14 22:13:20.000 UTC)"

func seedEntries(t *testing.T, stream string) {
	valkeytest.XAdd(t, testAdmin(t, testServer(t)), stream, entriesSeed...)
}

// checkServer runs an assertion about the server alone as a state check.
type checkServer func() error

func (c checkServer) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c()
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
