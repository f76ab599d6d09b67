package valkey_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// shared is the package's one server, started by the first test that needs it; every test
// works under its own key prefix.
var shared valkeytest.Shared

// server is the shared server. Without valkey-server installed the test skips.
func server(t testing.TB) *valkeytest.Server { return shared.Get(t) }

func TestMain(m *testing.M) { shared.Main(m) }

// key returns a key unique to the test.
func key(t testing.TB, suffix string) string { return valkeytest.Key(t, "test:{%s}:"+suffix) }

func newClient(t testing.TB, opts valkey.Options) *valkey.Client {
	t.Helper()
	if opts.URL == "" {
		opts.URL = server(t).URL()
	}
	c, err := valkey.NewClient(opts)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// fixture is what most tests start with: a client and an admin client of the shared server,
// and a stream key of the test's own.
func fixture(t testing.TB) (context.Context, *valkey.Client, *redis.Client, string) {
	return context.Background(), newClient(t, valkey.Options{}), adminClient(t), key(t, "stream")
}

func adminClient(t testing.TB) *redis.Client {
	t.Helper()
	c := server(t).Client()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// serverGroups is what XINFO GROUPS says, straight from the server.
func serverGroups(t testing.TB, rdb *redis.Client, stream string) []redis.XInfoGroup {
	t.Helper()
	groups, err := rdb.XInfoGroups(context.Background(), stream).Result()
	if err != nil {
		t.Fatalf("XINFO GROUPS %s: %v", stream, err)
	}
	return groups
}
