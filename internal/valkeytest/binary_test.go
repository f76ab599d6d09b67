package valkeytest

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The server tier runs once per Valkey version by setting VALKEY_SERVER. A helper that found
// its program on PATH instead (valkey-sentinel, or the valkey-cli that joins a cluster) would
// quietly test the installed version under another's name, so every kind of process the
// helpers start is asked which version it is.
func TestVersion_EveryHelperRunsTheChosenBuild(t *testing.T) {
	t.Parallel()
	major, minor, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d.%d.", major, minor)
	check := func(t *testing.T, what string, s *Server) {
		t.Helper()
		rdb := s.Client()
		defer func() { _ = rdb.Close() }()
		got := InfoField(t, rdb, "server", "valkey_version")
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s at %s runs Valkey %s; VALKEY_SERVER chose %s", what, s.Addr(), got, want)
		}
	}
	t.Run("standalone and replica", func(t *testing.T) {
		t.Parallel()
		primary := StartT(t)
		check(t, "the server", primary)
		check(t, "its replica", StartReplicaT(t, primary))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := StartClusterT(t, 3, 0)
		for _, n := range c.Nodes {
			check(t, "a cluster node", n)
		}
		owner, err := c.Owner(context.Background(), 0)
		if err != nil {
			t.Fatalf("valkey-cli --cluster create left slot 0 unserved: %v", err)
		}
		check(t, "the owner of slot 0", owner)
	})
	t.Run("sentinel", func(t *testing.T) {
		t.Parallel()
		st := StartSentinelT(t, 1)
		check(t, "the primary", st.Primary)
		check(t, "the sentinel", st.Sentinels[0])
	})
}
