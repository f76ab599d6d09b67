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
	major, minor := VersionT(t)
	want := fmt.Sprintf("%d.%d.", major, minor)
	check := func(t *testing.T, what string, s *Server) {
		t.Helper()
		rdb := s.Client()
		defer func() { _ = rdb.Close() }()
		info, err := Info(context.Background(), rdb, "server")
		got, ok := info["valkey_version"]
		if !ok { // Valkey 7.2 and Redis report redis_version only
			got, ok = info["redis_version"]
		}
		if err != nil || !ok {
			t.Fatalf("INFO server of %s at %s names no version (err %v)", what, s.Addr(), err)
		}
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

// The version comes from what the server prints, for every server the tier supports.
func TestParseVersion_EveryServerItSupports(t *testing.T) {
	t.Parallel()
	for out, want := range map[string][2]int{
		"Valkey server v=7.2.4 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=3d2b9b5b0c8e1a2f\n": {7, 2},
		"Valkey server v=8.0.1 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=39f7c371e0a96e3d\n": {8, 0},
		"Valkey server v=9.1.2 sha=00000000:1 malloc=libc bits=64 build=4463ee450d021318\n":           {9, 1},
		"Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=ae4d7c971a948f0\n":  {7, 0},
	} {
		major, minor, err := parseVersion(out)
		if err != nil || major != want[0] || minor != want[1] {
			t.Errorf("parseVersion(%q) = %d.%d, %v; want %d.%d", out, major, minor, err, want[0], want[1])
		}
	}
	for _, out := range []string{"", "valkey-server: command not found", "Valkey server v=9 sha=1"} {
		if _, _, err := parseVersion(out); err == nil {
			t.Errorf("parseVersion(%q) found a version", out)
		}
	}
}

// A missing server's message names the install command of the system the tests run on.
func TestLinuxHint_NamesTheDistributionsCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ids  []string
		want string
	}{
		{[]string{"ubuntu", "debian"}, "apt-get install valkey-server"},
		{[]string{"linuxmint", "ubuntu"}, "make deps"},
		{[]string{"fedora"}, "dnf install valkey"},
		{[]string{"rocky", "rhel", "centos", "fedora"}, "dnf install valkey"},
		{[]string{"arch"}, "pacman -S valkey"},
		{[]string{"alpine"}, "apk add valkey"},
		{[]string{"opensuse-tumbleweed", "suse", "opensuse"}, "zypper install valkey"},
		{nil, "from your distribution's packages"},
	} {
		if got := linuxHint("valkey", c.ids); !strings.Contains(got, c.want) {
			t.Errorf("linuxHint(%v) = %q; want it to say %q", c.ids, got, c.want)
		}
	}
}
