// Package cpuprofile lets a bench provider binary write a CPU profile (and, on request, a
// heap profile at exit) when the harness or an experiment asks.
package cpuprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// EnvDir names the directory profiles go to; unset means no profile.
const EnvDir = "BENCH_CPUPROFILE_DIR"

// EnvHeapDir names the directory for a heap profile written as the process ends, after a
// GC (in-use and allocation totals); unset means none.
const EnvHeapDir = "BENCH_HEAPPROFILE_DIR"

// Start begins a CPU profile into $BENCH_CPUPROFILE_DIR/<name>-<pid>.pprof when the variable
// is set, and returns the function that ends it. Terraform starts several plugin processes
// per command, so every process writes its own file; pprof merges them.
func Start(name string) (stop func()) {
	heap := func() {}
	if dir := os.Getenv(EnvHeapDir); dir != "" {
		heap = func() {
			runtime.GC() // in-use figures are as of the last GC: make that now
			if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.heap.pprof", name, os.Getpid()))); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				_ = f.Close()
			}
		}
	}
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return heap
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
		heap()
	}
}
