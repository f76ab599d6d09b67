// Command rsswrap stands in for a provider binary in the bench's dev_overrides directory: it
// runs the real binary of the same name from $BENCH_REAL_DIR with the same arguments, standard
// streams and environment, and when it exits appends one line to $BENCH_RSS_LOG:
//
//	<binary> <pid> <peak RSS in KiB> <wall ms> <user+sys CPU ms>
//
// The peak is the kernel's rusage maxrss of the child, so nothing is sampled or missed.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/echomq/terraform-provider-valkey/bench/internal/rusage"
)

func main() {
	name := filepath.Base(os.Args[0])
	target := filepath.Join(os.Getenv("BENCH_REAL_DIR"), name)
	cmd := exec.Command(target, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "rsswrap: %v\n", err)
		os.Exit(1)
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = max(exit.ExitCode(), 1)
	} else if err != nil {
		code = 1
	}
	if log := os.Getenv("BENCH_RSS_LOG"); log != "" {
		if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			ps := cmd.ProcessState
			cpu := ps.UserTime() + ps.SystemTime()
			_, _ = fmt.Fprintf(f, "%s %d %d %d %d\n", name, cmd.Process.Pid, rusage.MaxRSSKiB(ps), time.Since(start).Milliseconds(), cpu.Milliseconds())
			_ = f.Close()
		}
	}
	os.Exit(code)
}
