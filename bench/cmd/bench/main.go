// Command bench is `make bench`: it measures the Valkey provider against the floor any plugin
// provider pays (bench/floor: the same schemas, no commands), side by side on one local
// valkey-server, and writes BENCHMARKS.md.
//
// The run is a list of scenarios, each with a section of the report of its own: groups (plan,
// apply, refresh and destroy of N groups, with and without a warning per group, in both shapes
// of configuration, on each CLI of -terraform), cluster (apply and no-change plan of N groups on
// a Valkey Cluster of 3 primaries, without and with replicas, beside one server and the floor),
// query (`terraform query` over thousands of streams) and rpcrss (the plugin stack without
// Terraform). A new scenario is a file with a type
// that implements scenario, and its flags, added to scenarios below.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// scenario is one part of the run. run measures and returns the scenario's section of the
// report, in markdown: its conditions (sectionHead), what it measures, its targets and tables.
type scenario interface {
	name() string // for -only, and the markers around its section
	run(ctx context.Context, b *bench) (string, error)
}

// scenarios are a full run; optIn (scale.go) only run when -only names them.
var scenarios = []scenario{groupsScenario{}, clusterScenario{}, queryScenario{}, rpcScenario{}}

// bench is what every scenario shares: the settings, the binaries, the server.
type bench struct {
	reps, parallelism int
	quick             bool
	exactWarnings     bool   // every command prints exactly expectedWarnings (the gate only names every group)
	out               string // work directory: binaries, configurations, state
	cliConfig         string // dev_overrides for both providers, through rsswrap
	realDir           string // where rsswrap finds the real provider binaries
	rpcrss            string
	srv               *valkeytest.Server
	rdb               *redis.Client
	// partial, when set (-only), writes a scenario's section before it ends: what a run of hours
	// measured so far, kept if it is interrupted.
	partial func(name, section string) error
}

// terraform is a runner for the CLI bin.
func (b *bench) terraform(bin string) *terraform {
	return &terraform{bin: bin, cliConfig: b.cliConfig, realDir: b.realDir, parallelism: b.parallelism}
}

func main() {
	var (
		b      = bench{exactWarnings: true}
		only   string
		report string
		notes  string
	)
	flag.IntVar(&b.reps, "reps", 3, "timed repetitions of each measured command")
	flag.BoolVar(&b.quick, "quick", false, "smoke run: the smallest sizes, one repetition, the first CLI only, no report unless -report is given")
	flag.IntVar(&b.parallelism, "parallelism", 10, "terraform -parallelism")
	flag.StringVar(&only, "only", "", "run these scenarios alone, comma-separated ("+scenarioNames()+"): each one's section of the report is replaced as it ends, the rest kept")
	flag.StringVar(&b.out, "out", "out", "work directory for binaries, configurations and state (gitignored)")
	flag.StringVar(&report, "report", "BENCHMARKS.md", "report to write; empty writes none")
	flag.StringVar(&notes, "notes", "notes.md", "hand-written analysis appended to the report when the file exists")
	flag.StringVar(&providerRoot, "provider", providerRoot, "the provider's module to build ours from")
	flag.BoolVar(&gateMode, "gate", false, "the perf gate (make perfgate) instead of the scenarios: see gate.go and -gate-*")
	flag.Parse()
	if gateMode {
		os.Exit(runGate(&b))
	}
	if b.quick {
		b.reps = 1
		if !isFlagSet("report") {
			report = ""
		}
	}
	if b.reps < 1 {
		fatalf("-reps must be 1 or more")
	}
	run := scenarios
	if only != "" {
		run = nil
		all := append(slices.Clone(scenarios), optIn...)
		for name := range strings.SplitSeq(only, ",") {
			i := slices.IndexFunc(all, func(s scenario) bool { return s.name() == strings.TrimSpace(name) })
			if i < 0 {
				fatalf("-only %q: the scenarios are %s", name, scenarioNames())
			}
			run = append(run, all[i])
		}
	}
	for _, s := range run {
		if c, ok := s.(interface{ check(*bench) error }); ok {
			if err := c.check(&b); err != nil {
				fatalf("%s: %v", s.name(), err)
			}
		}
	}
	ctx, stop := b.start()
	defer stop()
	if err := writeReport(ctx, &b, run, only != "", report, notes); err != nil {
		fatalf("%v", err)
	}
}

// cachedTool is where scripts/setup.sh puts a tool it builds.
func cachedTool(name string) string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache/terraform-provider-valkey/bin", name)
}

func scenarioNames() string {
	var names []string
	for _, s := range append(slices.Clone(scenarios), optIn...) {
		names = append(names, s.name())
	}
	return strings.Join(names, ", ")
}

// parseSizes reads a comma-separated list of N (each at least 10); empty is none.
func parseSizes(name, list string) []int {
	var ns []int
	if strings.TrimSpace(list) == "" {
		return nil
	}
	for s := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 10 {
			fatalf("bad -%s entry %q: want integers >= 10", name, s)
		}
		ns = append(ns, n)
	}
	if !slices.IsSorted(ns) {
		fatalf("-%s must be in increasing order", name)
	}
	return ns
}

func isFlagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// providerRoot is the provider's module, seen from bench/: where ours is built from. -provider
// names another copy (the perf gate's planted check builds one with a patch applied).
var providerRoot = ".."

// start builds the binaries and starts the server, or stops the program; stop stops the
// server. ctx ends on an interrupt.
func (b *bench) start() (ctx context.Context, stop func()) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	if err := b.build(ctx); err != nil {
		fatalf("%v", err)
	}
	return ctx, func() { b.srv.Close(); cancel() }
}

// build builds the binaries (our provider exactly as `make build` does, in its own module; in
// this module the plugin floor, the RSS wrapper under both provider names, and rpcrss), writes
// the CLI configuration and starts the server.
func (b *bench) build(ctx context.Context) error {
	out, err := filepath.Abs(b.out)
	if err != nil {
		return err
	}
	b.out = out
	if err := os.RemoveAll(filepath.Join(out, "work")); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(providerRoot, "main.go")); err != nil {
		return fmt.Errorf("run the harness from bench/, below the provider's module (make bench does): %w", err)
	}
	b.realDir, b.rpcrss = filepath.Join(out, "bin", "real"), filepath.Join(out, "bin", "rpcrss")
	wrap := filepath.Join(out, "bin", "wrap")
	for _, step := range []struct{ dir, dst, pkg string }{
		{providerRoot, filepath.Join(b.realDir, "terraform-provider-valkey"), "."},
		{".", filepath.Join(b.realDir, "terraform-provider-valkeyfloor"), "./floor"},
		{".", filepath.Join(wrap, "terraform-provider-valkey"), "./cmd/rsswrap"},
		{".", filepath.Join(wrap, "terraform-provider-valkeyfloor"), "./cmd/rsswrap"},
		{".", b.rpcrss, "./cmd/rpcrss"},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", step.dst, step.pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = step.dir, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s in %s: %w", step.pkg, step.dir, err)
		}
	}
	b.cliConfig = filepath.Join(out, "cli.tfrc")
	if err := os.WriteFile(b.cliConfig, fmt.Appendf(nil, `provider_installation {
  dev_overrides {
    "echomq/valkey"      = %q
    "echomq/valkeyfloor" = %q
  }
  direct {}
}
`, wrap, wrap), 0o644); err != nil {
		return err
	}
	if b.srv, err = valkeytest.Start(); err != nil {
		return err
	}
	b.rdb = b.srv.Client()
	logf("valkey-server on %s", b.srv.Addr())
	return nil
}
