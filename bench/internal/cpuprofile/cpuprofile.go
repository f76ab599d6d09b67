// Package cpuprofile lets a bench provider binary write a CPU profile when the harness asks.
package cpuprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// EnvDir names the directory profiles go to; unset means no profile.
const EnvDir = "BENCH_CPUPROFILE_DIR"

// Start begins a CPU profile into $BENCH_CPUPROFILE_DIR/<name>-<pid>.pprof when the variable
// is set, and returns the function that ends it. Terraform starts several plugin processes
// per command, so every process writes its own file; pprof merges them.
func Start(name string) (stop func()) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", name, os.Getpid())))
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
