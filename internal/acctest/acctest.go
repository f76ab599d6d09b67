// Package acctest holds what the acceptance tests of internal/provider and internal/systemtest
// share: the one server of a test binary, the per-test stream key, the admin client, the
// Terraform configuration they apply, and checks on the server.
//
// It must not import internal/provider, whose tests are internal to that package and import
// this one: the provider factories, which need provider.New, stay in each test package.
package acctest

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// shared is the test binary's one server, started by the first test that needs it; each test
// works under its own key prefix.
var shared valkeytest.Shared

// Server is the test binary's shared server; without valkey-server installed the test skips.
func Server(t testing.TB) *valkeytest.Server {
	t.Helper()
	return shared.Get(t)
}

// Main runs the package's tests from its TestMain, then stops the shared server and runs cleanups.
func Main(m *testing.M, cleanups ...func()) { shared.Main(m, cleanups...) }

// StreamKey returns a stream key unique to the test, in the shape users write.
func StreamKey(t testing.TB) string { return valkeytest.Key(t, "emq:{%s}:stream/main") }

// Admin is a client of srv for the test to check or prepare the server, closed when it ends.
func Admin(t testing.TB, srv *valkeytest.Server) *redis.Client {
	t.Helper()
	c := srv.Client()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// EntriesSeed is three entries whose IDs name known times.
var EntriesSeed = []string{"1700000000000-0", "1700000000001-0", "1700000060000-5"}

// FirstEntry and LastEntry are how a replay warning names the first and the last of EntriesSeed.
const (
	FirstEntry = "from 1700000000000-0 (2023-11-14 22:13:20.000 UTC)"
	LastEntry  = "to 1700000060000-5 (2023-11-14 22:14:20.000 UTC)"
)

// SeedEntries adds EntriesSeed to stream on the shared server.
func SeedEntries(t *testing.T, stream string) {
	valkeytest.XAdd(t, Admin(t, Server(t)), stream, EntriesSeed...)
}

// CheckServer runs an assertion about the server alone as a state check.
type CheckServer func() error

// CheckState reports the assertion's error.
func (c CheckServer) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c()
}

// MustDo fails the test at once on an error.
func MustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
