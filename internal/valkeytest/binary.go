package valkeytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// ServerEnv names the server binary the tests start, a path or a name looked up on PATH;
// without it they start valkey-server from PATH. `make testservers` sets it to run the server
// tier once per Valkey version. RedisEnv does the same for the Redis compatibility check.
const (
	ServerEnv = "VALKEY_SERVER"
	RedisEnv  = "REDIS_SERVER"
)

// Binary is the server binary tests use: $VALKEY_SERVER, or valkey-server on PATH, wherever
// it is installed. Its version is what it reports (Version), never read from its path.
func Binary() (string, error) {
	return lookServer(ServerEnv, "valkey-server")
}

// RedisBinary is the redis-server of the compatibility check: $REDIS_SERVER, or redis-server
// on PATH.
func RedisBinary() (string, error) {
	return lookServer(RedisEnv, "redis-server")
}

func lookServer(env, program string) (string, error) {
	name := os.Getenv(env)
	if name == "" {
		name = program
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if name != program {
			return "", fmt.Errorf("%s=%s is not a program that runs: %w", env, name, err)
		}
		return "", fmt.Errorf("no %s on PATH (or set %s to one): %s", program, env, InstallHint(program))
	}
	return path, nil
}

// InstallHint says how to install program (valkey-server and its companions, or
// redis-server) on this system; scripts/lib.sh (install_hint) says it shorter to `make deps`
// and `make demo`.
func InstallHint(program string) string {
	pkg := "valkey"
	if strings.HasPrefix(program, "redis") {
		pkg = "redis"
	}
	switch runtime.GOOS {
	case "darwin":
		return "brew install " + pkg
	case "windows":
		return pkg + " has no native Windows build: run the server tests inside WSL, with " + pkg + " installed there"
	case "freebsd":
		return "pkg install " + pkg
	case "linux":
		return linuxHint(pkg, osRelease())
	}
	return "install " + pkg + " (" + program + " and its tools) from your system's packages"
}

// linuxHint is the install command for the distribution that /etc/os-release describes
// (its ID and ID_LIKE words).
func linuxHint(pkg string, ids []string) string {
	for _, id := range ids {
		switch id {
		case "debian", "ubuntu":
			if pkg == "redis" {
				return "make deps, or apt-get install redis-server"
			}
			return "make deps, or apt-get install valkey-server valkey-tools valkey-sentinel (Debian bookworm: from bookworm-backports)"
		case "fedora", "rhel", "centos":
			return "dnf install " + pkg
		case "arch":
			return "pacman -S " + pkg
		case "alpine":
			return "apk add " + pkg
		case "suse", "opensuse":
			return "zypper install " + pkg
		}
	}
	return "install " + pkg + " from your distribution's packages"
}

// osReleaseFile describes the Linux distribution (a test points it at its own).
var osReleaseFile = "/etc/os-release"

// osRelease is the ID and then the ID_LIKE words of osReleaseFile.
func osRelease() []string {
	data, err := os.ReadFile(osReleaseFile)
	if err != nil {
		return nil
	}
	var id, like []string
	for line := range strings.Lines(string(data)) {
		key, value, _ := strings.Cut(strings.TrimSpace(line), "=")
		value = strings.Trim(value, `"'`)
		switch key {
		case "ID":
			id = []string{value}
		case "ID_LIKE":
			like = strings.Fields(value)
		}
	}
	return append(id, like...)
}

// Companion is a program of the same Valkey build as Binary, such as valkey-cli or
// valkey-sentinel: beside $VALKEY_SERVER when that is set (scripts/setup.sh puts each built
// version's programs in one folder), else on PATH. A cluster created by another version's
// valkey-cli, or a Sentinel of another version, would test a mix no deployment runs.
func Companion(program string) (string, error) {
	if os.Getenv(ServerEnv) == "" {
		path, err := exec.LookPath(program)
		if err != nil {
			return "", fmt.Errorf("no %s on PATH: %s", program, InstallHint(program))
		}
		return path, nil
	}
	server, err := Binary()
	if err != nil {
		return "", err
	}
	path := filepath.Join(filepath.Dir(server), program+filepath.Ext(server))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("no %s beside %s=%s: a server's tools come from the same build", program, ServerEnv, server)
	}
	return path, nil
}

// Version is the major and minor version of Binary, as `valkey-server --version` reports it
// ("Valkey server v=9.1.2 ...", or "Redis server v=7.0.15 ..."), for tests of what only some
// versions do.
func Version() (major, minor int, err error) {
	v, err := version()
	return v[0], v[1], err
}

var version = sync.OnceValues(func() ([2]int, error) {
	bin, err := Binary()
	if err != nil {
		return [2]int{}, err
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return [2]int{}, fmt.Errorf("%s --version: %w", bin, err)
	}
	major, minor, err := parseVersion(string(out))
	if err != nil {
		return [2]int{}, fmt.Errorf("%s --version: %w", bin, err)
	}
	return [2]int{major, minor}, nil
})

// parseVersion reads the major and minor version from the first line of `--version`.
func parseVersion(out string) (major, minor int, err error) {
	_, v, found := strings.Cut(out, " v=")
	if _, err := fmt.Sscanf(v, "%d.%d.", &major, &minor); !found || err != nil {
		return 0, 0, fmt.Errorf("printed %q, which names no version", out)
	}
	return major, minor, nil
}
