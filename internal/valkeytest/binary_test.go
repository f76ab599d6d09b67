package valkeytest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

// A missing server's message names the install command of the system the tests run on: on
// Linux, of the distribution its /etc/os-release describes (here, the files those
// distributions ship, ID and ID_LIKE quoted or not).
func TestLinuxHint_NamesTheDistributionsCommand(t *testing.T) {
	t.Setenv(ServerEnv, "")
	t.Setenv(RedisEnv, "")
	t.Setenv("PATH", t.TempDir()) // nothing to find
	missing := func(t *testing.T, look func() (string, error), program, want string) {
		t.Helper()
		_, err := look()
		if err == nil || !strings.Contains(err.Error(), "no "+program+" on PATH") || !strings.Contains(err.Error(), want) {
			t.Errorf("with no %s installed the message is %v; want it to say %q", program, err, want)
		}
	}
	if runtime.GOOS != "linux" {
		want, ok := map[string]string{"darwin": "brew install valkey", "windows": "WSL", "freebsd": "pkg install valkey"}[runtime.GOOS]
		if !ok {
			t.Skipf("no install command known for %s", runtime.GOOS)
		}
		missing(t, Binary, "valkey-server", want)
		return
	}
	for _, c := range []struct{ distribution, osRelease, valkey, redis string }{
		{"Debian", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n", "apt-get install valkey-server", "apt-get install redis-server"},
		{"Ubuntu", "NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\n", "make deps", "apt-get install redis-server"},
		{"Linux Mint", "ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n", "apt-get install valkey-server", "make deps"},
		{"Fedora", "ID=fedora\nVERSION_ID=41\n", "dnf install valkey", "dnf install redis"},
		{"Rocky Linux", "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n", "dnf install valkey", "dnf install redis"},
		{"Arch Linux", "ID=arch\n", "pacman -S valkey", "pacman -S redis"},
		{"Alpine", "ID=alpine\n", "apk add valkey", "apk add redis"},
		{"openSUSE Tumbleweed", "ID=\"opensuse-tumbleweed\"\nID_LIKE=\"opensuse suse\"\n", "zypper install valkey", "zypper install redis"},
		{"an unknown distribution", "ID=plan9\n", "install valkey from your distribution's packages", "install redis from"},
		{"no /etc/os-release", "", "install valkey from your distribution's packages", "install redis from"},
	} {
		t.Run(c.distribution, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "os-release")
			if c.osRelease != "" {
				if err := os.WriteFile(file, []byte(c.osRelease), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			old := osReleaseFile
			osReleaseFile = file
			t.Cleanup(func() { osReleaseFile = old })
			missing(t, Binary, "valkey-server", c.valkey)
			missing(t, RedisBinary, "redis-server", c.redis)
		})
	}
}
