package valkeytest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// RequiredEnv, when set (as make ci and CI set it), turns a missing server binary from a skip
// into a failure, so that the full suite can never pass by skipping.
const RequiredEnv = "VALKEYTEST_REQUIRED"

// Need skips the test, or fails it under RequiredEnv, unless the server binary and every
// named companion of it (Companion) are there.
func Need(tb testing.TB, companions ...string) {
	tb.Helper()
	if _, err := Binary(); err != nil {
		missing(tb, err.Error())
	}
	for _, p := range companions {
		if _, err := Companion(p); err != nil {
			missing(tb, err.Error())
		}
	}
}

// VersionT is the major and minor version of the server the tests start (Version). It skips
// the test, or fails it under RequiredEnv, when there is no server.
func VersionT(tb testing.TB) (major, minor int) {
	tb.Helper()
	Need(tb)
	major, minor, err := Version()
	if err != nil {
		tb.Fatal(err)
	}
	return major, minor
}

// NeedVersion skips the test, naming the version it needs and what for, unless the server is
// at least major.minor. A server of an earlier version is no missing server: the test skips
// under RequiredEnv too, and the run's summary lists the reason.
func NeedVersion(tb testing.TB, major, minor int, what string) {
	tb.Helper()
	have, haveMinor := VersionT(tb)
	if have < major || have == major && haveMinor < minor {
		tb.Skipf("needs Valkey %d.%d or later (%s); the server is %d.%d", major, minor, what, have, haveMinor)
	}
}

// RedisT is the redis-server of the compatibility check (RedisBinary). Redis is optional: the
// test skips when there is none, and fails only when RedisEnv names one that does not run (make
// ci sets it, so the full run cannot pass without the check).
func RedisT(tb testing.TB) string {
	tb.Helper()
	path, err := RedisBinary()
	switch {
	case err != nil && os.Getenv(RedisEnv) != "":
		tb.Fatal(err)
	case err != nil:
		tb.Skip(err.Error())
	}
	return path
}

// LookPathT finds program on PATH, or skips the test (fails it under RequiredEnv) naming what
// installs it.
func LookPathT(tb testing.TB, program, installedBy string) string {
	tb.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		missing(tb, program+" not installed ("+installedBy+" installs it)")
	}
	return path
}

func missing(tb testing.TB, reason string) {
	tb.Helper()
	if os.Getenv(RequiredEnv) != "" {
		tb.Fatal(reason)
	}
	tb.Skip(reason)
}

// StartT starts a server for one test and closes it when the test ends. It skips the test
// when no server binary is installed.
func StartT(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	Need(tb)
	s, err := Start(opts...)
	return closedAtEnd(tb, s, err)
}

// StartReplicaT starts a replica of primary for one test, linked when it returns, and closes it
// when the test ends.
func StartReplicaT(tb testing.TB, primary *Server, opts ...Option) *Server {
	tb.Helper()
	s, err := StartReplica(primary, opts...)
	return closedAtEnd(tb, s, err)
}

// StartTLST starts a server with a TLS port served by a fresh PKI (mutual TLS when
// requireClientCert is set), both removed when the test ends.
func StartTLST(tb testing.TB, requireClientCert bool) (*Server, *PKI) {
	tb.Helper()
	Need(tb)
	pki := NewPKIT(tb)
	return StartT(tb, WithTLS(pki, requireClientCert)), pki
}

// NewPKIT makes a PKI for one test and removes its files when the test ends.
func NewPKIT(tb testing.TB) *PKI {
	tb.Helper()
	pki, err := NewPKI()
	return closedAtEnd(tb, pki, err)
}

// StartClusterT is StartCluster for one test: it closes the cluster when the test ends.
func StartClusterT(tb testing.TB, masters, replicas int, opts ...Option) *Cluster {
	tb.Helper()
	Need(tb, "valkey-cli")
	c, err := StartCluster(masters, replicas, opts...)
	return closedAtEnd(tb, c, err)
}

// StartSentinelT starts a primary, a replica and n sentinels for one test and closes them
// when the test ends.
func StartSentinelT(tb testing.TB, n int) *Sentinel {
	tb.Helper()
	Need(tb, "valkey-sentinel")
	st, err := StartSentinel(n)
	return closedAtEnd(tb, st, err)
}

// closedAtEnd fails the test on err, and otherwise closes x when the test ends.
func closedAtEnd[T interface{ Close() }](tb testing.TB, x T, err error) T {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(x.Close)
	return x
}

// Key is a key unique to the test in the given shape, whose %s becomes the test's name and a
// random number: Key(t, "emq:{%s}:stream/main"). Tests that share a server work under their
// own keys, each its own hash tag.
func Key(tb testing.TB, shape string) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(tb.Name())
	return fmt.Sprintf(shape, fmt.Sprintf("%s-%d", name, rand.Uint32()))
}

// Shared is one server for a whole test binary, started by the first test that asks for it
// and closed by TestMain. Tests work under their own key prefixes, so they can share it.
type Shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Get returns the shared server, starting it on first use. Like StartT, it skips the test
// when no server binary is installed.
func (sh *Shared) Get(tb testing.TB) *Server {
	tb.Helper()
	Need(tb)
	sh.once.Do(func() { sh.srv, sh.err = Start() })
	if sh.err != nil {
		tb.Fatal(sh.err)
	}
	return sh.srv
}

// Main runs the package's tests (TestMain calls it), then stops the shared server, runs
// cleanups, and exits with the tests' code.
func (sh *Shared) Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	sh.Close()
	for _, cleanup := range cleanups {
		cleanup()
	}
	os.Exit(code)
}

// Close stops the shared server if it was started.
func (sh *Shared) Close() {
	if sh.srv != nil {
		sh.srv.Close()
	}
}

// ClosedAddrT returns a loopback address nothing listens on: a dial there is refused.
func ClosedAddrT(tb testing.TB) string {
	tb.Helper()
	port, err := FreePort()
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}
