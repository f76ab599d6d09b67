package valkeytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Binary is the server binary tests use: $VALKEY_SERVER, or valkey-server on PATH.
// scripts/test.sh sets VALKEY_SERVER to run the server tier once per Valkey version.
func Binary() (string, error) {
	name := os.Getenv("VALKEY_SERVER")
	if name == "" {
		name = "valkey-server"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found: run scripts/setup.sh (or `make test`) to install valkey-server 8.0 from bookworm-backports", name)
	}
	return path, nil
}

// Companion is a program of the same Valkey build as Binary, such as valkey-cli or
// valkey-sentinel: beside $VALKEY_SERVER when that is set (scripts/setup.sh puts each built
// version's programs in one folder), else on PATH. A cluster created by another version's
// valkey-cli, or a Sentinel of another version, would test a mix no deployment runs.
func Companion(program string) (string, error) {
	if os.Getenv("VALKEY_SERVER") == "" {
		path, err := exec.LookPath(program)
		if err != nil {
			return "", fmt.Errorf("%s not found: run scripts/setup.sh valkey (or make test)", program)
		}
		return path, nil
	}
	server, err := Binary()
	if err != nil {
		return "", err
	}
	path := filepath.Join(filepath.Dir(server), program)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s not found beside VALKEY_SERVER (%s): run scripts/setup.sh valkey@VERSION", program, server)
	}
	return path, nil
}

var version struct {
	once         sync.Once
	major, minor int
	err          error
}

// Version is the major and minor version of Binary, as `valkey-server --version` reports it
// ("Valkey server v=9.1.2 ..."), for tests of what only some versions do.
func Version() (major, minor int, err error) {
	version.once.Do(func() {
		bin, err := Binary()
		if err != nil {
			version.err = err
			return
		}
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			version.err = fmt.Errorf("%s --version: %w", bin, err)
			return
		}
		_, v, found := strings.Cut(string(out), " v=")
		parts := strings.SplitN(v, ".", 3)
		if !found || len(parts) < 2 {
			version.err = fmt.Errorf("%s --version printed %q, which names no version", bin, out)
			return
		}
		version.major, version.err = strconv.Atoi(parts[0])
		if version.err == nil {
			version.minor, version.err = strconv.Atoi(parts[1])
		}
	})
	return version.major, version.minor, version.err
}
