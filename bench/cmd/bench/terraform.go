package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/bench/internal/rusage"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// opResult is one terraform command.
type opResult struct {
	Wall      time.Duration
	CPU       time.Duration // user+sys of terraform and every process it waited for (plugins)
	RSSKiB    int64         // peak RSS of the largest provider process
	PluginCPU time.Duration // user+sys of the provider processes alone
	// TreeRSSKiB is wait4's maxrss for Terraform: the largest peak of Terraform and of every
	// process it waited for, so Terraform's own peak whenever it is above RSSKiB.
	TreeRSSKiB int64
	cmds       map[string]int64 // the server's command counts (b.counted), nil where not counted
}

func (r opResult) wallSecs() float64   { return r.Wall.Seconds() }
func (r opResult) cpuSecs() float64    { return r.CPU.Seconds() }
func (r opResult) pluginSecs() float64 { return r.PluginCPU.Seconds() }
func (r opResult) rssMiB() float64     { return float64(r.RSSKiB) / 1024 }

// terraform runs the CLI with a controlled environment.
type terraform struct {
	bin         string
	cliConfig   string
	realDir     string // where rsswrap finds the real provider binaries
	parallelism int
	prefix      []string // a command the CLI runs under (perf record --), or none
}

func (tf *terraform) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TF_") || strings.HasPrefix(k, "VALKEY_") || strings.HasPrefix(k, "BENCH_") || k == "CHECKPOINT_DISABLE" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"TF_CLI_CONFIG_FILE="+tf.cliConfig,
		"TF_IN_AUTOMATION=1",
		"CHECKPOINT_DISABLE=1",
		"BENCH_REAL_DIR="+tf.realDir,
	)
	return append(env, extra...)
}

// run runs one command in dir, measures it, and returns what Terraform wrote (stdout and stderr
// together). op is plan (it must plan changes), apply, refresh (a plan that must find no
// changes), adopt (a plan that must plan changes: of groups the server holds), destroy, or
// query (with -json).
func (tf *terraform) run(ctx context.Context, dir, op string, extraEnv ...string) (opResult, []byte, error) {
	args := []string{op, "-no-color"}
	changes := false
	switch op {
	case "apply", "destroy":
		args = append(args, "-input=false", "-parallelism="+strconv.Itoa(tf.parallelism), "-auto-approve")
	case "plan", "refresh", "adopt":
		args = []string{"plan", "-no-color", "-input=false", "-parallelism=" + strconv.Itoa(tf.parallelism), "-detailed-exitcode"}
		changes = op != "refresh"
	case "query":
		args = append(args, "-json")
	}
	rssLog := filepath.Join(dir, "rss.log")
	_ = os.Remove(rssLog)
	argv := append(append(slices.Clone(tf.prefix), tf.bin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	// On interrupt let Terraform stop its providers itself, rather than orphan them.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 15 * time.Second
	cmd.Env = tf.env(append(extraEnv, "BENCH_RSS_LOG="+rssLog)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if changes && errors.As(err, &exit) && exit.ExitCode() == 2 {
		err = nil // -detailed-exitcode: changes planned
	} else if changes && err == nil {
		err = errors.New("the plan found no changes, want a plan of creates")
	}
	if err != nil {
		tail := out.String()
		if len(tail) > 3000 {
			tail = tail[len(tail)-3000:]
		}
		return opResult{}, nil, fmt.Errorf("terraform %s in %s: %w\n%s", op, dir, err, tail)
	}
	ps := cmd.ProcessState
	res := opResult{Wall: wall, CPU: ps.UserTime() + ps.SystemTime(), TreeRSSKiB: rusage.MaxRSSKiB(ps)}
	res.RSSKiB, res.PluginCPU = readRSSLog(rssLog)
	return res, out.Bytes(), nil
}

// counted runs op in dir against the server at addr (the bench's own, or a proxy in front of
// it) with the server's command counts of the command alone.
func (b *bench) counted(ctx context.Context, tf *terraform, dir, op, addr string) (opResult, []byte, error) {
	if err := b.rdb.ConfigResetStat(ctx).Err(); err != nil {
		return opResult{}, nil, err
	}
	r, out, err := tf.run(ctx, dir, op, "VALKEY_URL=valkey://"+addr+"/0")
	if err == nil {
		r.cmds, err = commandStats(ctx, b.rdb)
	}
	return r, out, err
}

// harnessCommands are the harness's own commands, left out of the counts.
var harnessCommands = map[string]bool{"config|resetstat": true, "info": true, "flushall": true}

// commandStats reads INFO commandstats into command -> calls, without the harness's own.
func commandStats(ctx context.Context, rdb *redis.Client) (map[string]int64, error) {
	stats, err := valkeytest.CommandStats(ctx, rdb)
	for name := range harnessCommands {
		delete(stats, name)
	}
	return stats, err
}

// readRSSLog is the largest peak RSS and the CPU time of the provider processes rsswrap logged.
func readRSSLog(path string) (peak int64, cpu time.Duration) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		kib, _ := strconv.ParseInt(fields[2], 10, 64)
		ms, _ := strconv.ParseInt(fields[4], 10, 64)
		peak = max(peak, kib)
		cpu += time.Duration(ms) * time.Millisecond
	}
	return peak, cpu
}

// version runs bin with args and returns its first output line.
func version(bin string, env []string, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
