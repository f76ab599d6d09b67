package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// subject is one thing measured: our provider, the plugin floor, or the core floor.
type subject struct {
	key   string // ours, plugin, core
	label string
}

var subjects = []subject{
	{"ours", "valkey (ours)"},
	{"plugin", "plugin floor"},
	{"core", "core floor (terraform_data)"},
}

// shape is N groups over K streams.
type shape struct{ N, K int }

func (s shape) String() string { return fmt.Sprintf("N=%d K=%d", s.N, s.K) }

// writeConfig writes one main.tf for sub and sh into dir. The provider blocks are empty: the
// harness passes VALKEY_URL, so the same directory can point at the server or the proxy.
func writeConfig(dir string, sub subject, sh shape) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	switch sub.key {
	case "ours":
		b.WriteString("terraform {\n  required_providers {\n    valkey = { source = \"echomq/valkey\" }\n  }\n}\n\nprovider \"valkey\" {}\n")
	case "plugin":
		b.WriteString("terraform {\n  required_providers {\n    valkeyfloor = { source = \"echomq/valkeyfloor\" }\n  }\n}\n\nprovider \"valkeyfloor\" {}\n")
	}
	for i := range sh.N {
		stream := fmt.Sprintf("bench:{s%d}:stream", i%sh.K)
		group := fmt.Sprintf("g%d", i)
		switch sub.key {
		case "ours", "plugin":
			typ := "valkey_stream_group"
			if sub.key == "plugin" {
				typ = "valkeyfloor_stream_group"
			}
			fmt.Fprintf(&b, "\nresource %q \"g%d\" {\n  stream      = %q\n  name        = %q\n  group_start = \"new\"\n}\n", typ, i, stream, group)
		case "core":
			fmt.Fprintf(&b, "\nresource \"terraform_data\" \"g%d\" {\n  input = {\n    stream      = %q\n    name        = %q\n    group_start = \"new\"\n  }\n}\n", i, stream, group)
		}
	}
	_ = os.Remove(filepath.Join(dir, "terraform.tfstate"))
	_ = os.Remove(filepath.Join(dir, "terraform.tfstate.backup"))
	return os.WriteFile(filepath.Join(dir, "main.tf"), b.Bytes(), 0o644)
}

// opResult is one terraform command.
type opResult struct {
	Wall      time.Duration
	CPU       time.Duration // user+sys of terraform and every process it waited for (plugins)
	RSSKiB    int64         // peak RSS of the largest provider process; 0 for the core floor
	Plugins   int           // provider processes started
	PluginCPU time.Duration // user+sys of the provider processes alone
	// TreeRSSKiB is wait4's maxrss for Terraform: the largest peak of Terraform and of every
	// process it waited for, so Terraform's own peak whenever it is above RSSKiB.
	TreeRSSKiB int64
}

// terraform runs the CLI with a controlled environment.
type terraform struct {
	bin         string
	cliConfig   string
	realDir     string // where rsswrap finds the real provider binaries
	parallelism int
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

// run runs `terraform <op>` in dir and measures it. op is apply, plan, destroy or query (with
// -json); a plan must report no changes.
func (tf *terraform) run(ctx context.Context, dir, op string, extraEnv ...string) (opResult, error) {
	res, _, err := tf.runOutput(ctx, dir, op, extraEnv...)
	return res, err
}

// runOutput is run that also returns what Terraform wrote (stdout and stderr together).
func (tf *terraform) runOutput(ctx context.Context, dir, op string, extraEnv ...string) (opResult, []byte, error) {
	args := []string{op, "-no-color"}
	switch op {
	case "apply", "destroy":
		args = append(args, "-input=false", "-parallelism="+strconv.Itoa(tf.parallelism), "-auto-approve")
	case "plan":
		args = append(args, "-input=false", "-parallelism="+strconv.Itoa(tf.parallelism), "-detailed-exitcode")
	case "query":
		args = append(args, "-json")
	}
	rssLog := filepath.Join(dir, "rss.log")
	_ = os.Remove(rssLog)
	cmd := exec.CommandContext(ctx, tf.bin, args...)
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
	if err != nil {
		tail := out.String()
		if len(tail) > 3000 {
			tail = tail[len(tail)-3000:]
		}
		return opResult{}, nil, fmt.Errorf("terraform %s in %s: %w\n%s", op, dir, err, tail)
	}
	res := opResult{Wall: wall}
	if u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.CPU = time.Duration(u.Utime.Nano() + u.Stime.Nano())
		res.TreeRSSKiB = u.Maxrss
	}
	res.RSSKiB, res.Plugins, res.PluginCPU = readRSSLog(rssLog)
	return res, out.Bytes(), nil
}

func readRSSLog(path string) (peak int64, processes int, cpu time.Duration) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0
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
		processes++
	}
	return peak, processes, cpu
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
