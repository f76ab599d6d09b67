// Command bench is `make bench`: it measures the Valkey provider against the floor any plugin
// provider pays (bench/floor, same schema, no commands) and Terraform's own floor (N
// terraform_data resources), side by side in one run on one valkey-server, and writes
// BENCHMARKS.md.
//
// Each repetition runs apply, a no-change plan (with refresh) and destroy for every subject
// and shape, in an order that rotates from one repetition to the next. Server commands come
// from INFO commandstats (CONFIG RESETSTAT before each command), round trips from one extra
// pass through a counting loopback proxy, and provider peak RSS from bench/cmd/rsswrap,
// which dev_overrides puts in front of both provider binaries.
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

var ops = []string{"apply", "plan", "destroy"}

type config struct {
	sizes          []int
	rssSizes       []int
	querySizes     []int
	clusterShape   shape // N groups over K streams on a cluster; zero skips the scenario
	reps           int
	parallelism    int
	terraform      string
	queryTerraform string
	only           string
	outDir         string
	report         string
	notes          string
	pprof          bool
}

func main() {
	home, _ := os.UserHomeDir()
	var (
		cfg        config
		sizes      string
		rssSizes   string
		querySizes string
		cluster    string
		quick      bool
	)
	flag.StringVar(&sizes, "sizes", "100,500,1000", "comma-separated N (groups); each runs with K = N/10 and K = N streams")
	flag.StringVar(&rssSizes, "rss-sizes", "1000,2500", "comma-separated N for the peak-RSS series (K = N/10, one run each); empty skips it")
	flag.StringVar(&querySizes, "query-sizes", "2500,10000", "comma-separated N for the terraform query scenario (N streams, 3 groups each, listed by pattern); empty skips it")
	flag.StringVar(&cluster, "cluster", "1000/100", "N/K for the Cluster scenario (N groups over K streams on 3 primaries, without and with replicas); empty skips it")
	flag.IntVar(&cfg.reps, "reps", 3, "timed repetitions of apply, plan, destroy per subject and shape; 0 skips the timed runs and round trips")
	flag.BoolVar(&quick, "quick", false, "smoke run: -sizes 100 -reps 1 -rss-sizes 100,250 -query-sizes 250,1000 -cluster 100/10, no report unless -report is given")
	flag.IntVar(&cfg.parallelism, "parallelism", 10, "terraform -parallelism")
	flag.StringVar(&cfg.terraform, "terraform", filepath.Join(home, ".cache/terraform-provider-valkey/bin/terraform-1.5.7"), "Terraform 1.5.7 binary (make bench passes the one scripts/setup.sh built)")
	flag.StringVar(&cfg.queryTerraform, "query-terraform", filepath.Join(home, ".cache/terraform-provider-valkey/bin/terraform-1.16.4"),
		"Terraform 1.14 or later, for the query scenario (make bench passes the 1.16.4 that scripts/setup.sh built)")
	flag.StringVar(&cfg.only, "only", "", "run one scenario alone: query or cluster (the report's section is replaced, the rest kept)")
	flag.StringVar(&cfg.outDir, "out", "out", "work directory for binaries, configurations, state and profiles (gitignored)")
	flag.StringVar(&cfg.report, "report", "BENCHMARKS.md", "report to write; empty writes none")
	flag.StringVar(&cfg.notes, "notes", "notes.md", "hand-written analysis appended to the report when the file exists")
	flag.BoolVar(&cfg.pprof, "pprof", false, "after the timed runs, profile ours and the plugin floor (CPU) at the largest N")
	flag.Parse()
	if quick {
		sizes, cfg.reps = "100", 1
		if !isFlagSet("rss-sizes") {
			rssSizes = "100,250"
		}
		if !isFlagSet("query-sizes") {
			querySizes = "250,1000"
		}
		if !isFlagSet("cluster") {
			cluster = "100/10"
		}
		if !isFlagSet("report") {
			cfg.report = ""
		}
	}
	cfg.sizes = parseSizes("sizes", sizes)
	if len(cfg.sizes) == 0 {
		fatalf("-sizes names no N")
	}
	cfg.rssSizes = parseSizes("rss-sizes", rssSizes)
	if !slices.IsSorted(cfg.rssSizes) {
		fatalf("-rss-sizes must be in increasing order")
	}
	cfg.querySizes = parseSizes("query-sizes", querySizes)
	if !slices.IsSorted(cfg.querySizes) {
		fatalf("-query-sizes must be in increasing order")
	}
	if cfg.reps < 0 {
		fatalf("-reps must be 0 or more")
	}
	cfg.clusterShape = parseClusterShape(cluster)
	switch cfg.only {
	case "":
	case "query":
		if len(cfg.querySizes) == 0 {
			fatalf("-only query needs -query-sizes")
		}
	case "cluster":
		if cfg.clusterShape.N == 0 || cfg.reps == 0 {
			fatalf("-only cluster needs -cluster and -reps")
		}
		cfg.querySizes = nil
	default:
		fatalf("-only %q: the scenarios that run alone are query and cluster", cfg.only)
	}
	if len(cfg.querySizes) > 0 {
		if err := checkQueryTerraform(cfg.queryTerraform); err != nil {
			fatalf("%v", err)
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		fatalf("%v", err)
	}
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

// run is the whole benchmark.
func run(ctx context.Context, cfg config) error {
	began := time.Now()
	out, err := filepath.Abs(cfg.outDir)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(out, "work")); err != nil {
		return err
	}
	bins, err := build(ctx, out)
	if err != nil {
		return err
	}
	tf := &terraform{bin: cfg.terraform, cliConfig: filepath.Join(out, "cli.tfrc"), realDir: bins.real, parallelism: cfg.parallelism}
	if err := writeCLIConfig(tf.cliConfig, bins.wrap); err != nil {
		return err
	}

	srv, err := valkeytest.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	rdb := srv.Client()
	defer rdb.Close()
	env := machineInfo(cfg, tf)
	logf("%s; valkey-server on %s", env.summary(), srv.Addr())
	switch cfg.only {
	case "query":
		return queryAlone(ctx, cfg, out, tf, srv, rdb)
	case "cluster":
		return clusterAlone(ctx, cfg, out, tf)
	}

	var shapes []shape
	for _, n := range cfg.sizes {
		shapes = append(shapes, shape{n, n / 10}, shape{n, n})
	}
	dirs := map[string]string{}
	for _, sh := range shapes {
		for _, sub := range subjectsFor(sh) {
			dir := filepath.Join(out, "work", fmt.Sprintf("%s-n%d-k%d", sub.key, sh.N, sh.K))
			if err := writeConfig(dir, sub, sh); err != nil {
				return err
			}
			dirs[sub.key+sh.String()] = dir
		}
	}
	urlEnv := "VALKEY_URL=" + srv.URL()

	res := newResults(env, shapes)
	if cfg.reps > 0 {
		if err := warmUpAndCountTrips(ctx, tf, rdb, srv, dirs, shapes, urlEnv, res); err != nil {
			return err
		}
	}

	writeReport := func(final bool) error {
		res.Env.Elapsed = time.Since(began).Round(time.Second)
		res.Env.LoadEnd = loadAvg()
		report := res.markdown(cfg)
		if final {
			fmt.Println(report.tables)
		}
		if cfg.report == "" {
			return nil
		}
		return os.WriteFile(cfg.report, []byte(report.full), 0o644)
	}
	for rep := range cfg.reps {
		for si, sh := range shapes {
			subs := subjectsFor(sh)
			for i := range subs {
				sub := subs[(i+rep+si)%len(subs)]
				logf("rep %d/%d %s %s", rep+1, cfg.reps, sh, sub.label)
				record := func(op string, r opResult, cmds map[string]int64) {
					res.add(sh, sub.key, op, r, cmds)
				}
				if err := cycle(ctx, tf, rdb, dirs[sub.key+sh.String()], sub, record, urlEnv); err != nil {
					return err
				}
			}
		}
		// A report after every repetition: an interrupted run still leaves its numbers.
		res.Env.RepsDone = rep + 1
		if err := writeReport(false); err != nil {
			return err
		}
	}

	if err := rssSeries(ctx, cfg, out, tf, rdb, urlEnv, res); err != nil {
		return err
	}
	check, err := checkTFLog(ctx, out, tf, rdb, urlEnv)
	if err != nil {
		return err
	}
	res.logCheck = &check
	if res.rpcTable, err = rpcReproduction(ctx, bins.rpcrss); err != nil {
		return err
	}
	if cfg.clusterShape.N > 0 && cfg.reps > 0 {
		if res.cluster, err = runCluster(ctx, cfg, out, tf); err != nil {
			return err
		}
	}
	if len(cfg.querySizes) > 0 {
		if res.query, err = runQuery(ctx, cfg, out, tf, srv, rdb); err != nil {
			return err
		}
	}

	if cfg.pprof {
		// Profiling takes minutes: the report so far is written first.
		if err := writeReport(false); err != nil {
			return err
		}
		if err := profile(ctx, cfg, out, bins, tf, rdb, srv.URL(), res); err != nil {
			return err
		}
	}
	if err := writeReport(true); err != nil {
		return err
	}
	if cfg.report != "" {
		logf("wrote %s", cfg.report)
	}
	return nil
}

// warmUpAndCountTrips runs one untimed cycle per subject, which warms the page cache and
// Terraform's first-run work before the timed runs, then one cycle of ours per shape through
// the counting proxy (untimed) for the round trips.
func warmUpAndCountTrips(ctx context.Context, tf *terraform, rdb *redis.Client, srv *valkeytest.Server,
	dirs map[string]string, shapes []shape, urlEnv string, res *results) error {
	for _, sub := range subjects {
		if err := cycle(ctx, tf, rdb, dirs[sub.key+shapes[0].String()], sub, nil, urlEnv); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	proxy, err := valkeytest.StartProxy(srv.Addr())
	if err != nil {
		return err
	}
	defer proxy.Close()
	sub := subjects[0]
	for _, sh := range shapes {
		logf("round trips %s", sh)
		if err := rdb.FlushAll(ctx).Err(); err != nil {
			return err
		}
		for _, op := range ops {
			proxy.Take()
			if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
				return err
			}
			if _, err := tf.run(ctx, dirs[sub.key+sh.String()], op, "VALKEY_URL=valkey://"+proxy.Addr()+"/0"); err != nil {
				return err
			}
			cmds, err := commandStats(ctx, rdb)
			if err != nil {
				return err
			}
			trips, conns := proxy.Take()
			res.addTrips(sh, op, trips, conns, cmds)
		}
	}
	return nil
}

// cycle is apply, no-change plan, destroy in dir, with server counts around each command.
// record may be nil (warm-up).
func cycle(ctx context.Context, tf *terraform, rdb *redis.Client, dir string, sub subject, record func(string, opResult, map[string]int64), extraEnv ...string) error {
	if sub.key == "ours" {
		// Delete leaves groups on the server by design: start each cycle from an empty server
		// so that every Create really creates.
		if err := rdb.FlushAll(ctx).Err(); err != nil {
			return err
		}
	}
	for _, op := range ops {
		if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
			return err
		}
		r, err := tf.run(ctx, dir, op, extraEnv...)
		if err != nil {
			return err
		}
		cmds, err := commandStats(ctx, rdb)
		if err != nil {
			return err
		}
		if record != nil {
			record(op, r, cmds)
		}
	}
	return nil
}

// subjectsFor leaves the core floor out of the K = N shapes: terraform_data holds the stream
// name as a plain value, so the number of streams changes nothing for it.
func subjectsFor(sh shape) []subject {
	if sh.K == sh.N {
		return subjects[:2]
	}
	return subjects
}

type binaries struct{ real, wrap, prof, rpcrss string }

// providerRoot is the provider's module, seen from bench/.
const providerRoot = ".."

// build compiles our provider (exactly as `make build`: in its own module, with its go.mod),
// and in this module the plugin floor, the RSS wrapper (installed under both provider names),
// the profiling build of ours and rpcrss.
func build(ctx context.Context, out string) (binaries, error) {
	b := binaries{real: filepath.Join(out, "bin", "real"), wrap: filepath.Join(out, "bin", "wrap"), prof: filepath.Join(out, "bin", "prof"),
		rpcrss: filepath.Join(out, "bin", "rpcrss")}
	if _, err := os.Stat(filepath.Join(providerRoot, "main.go")); err != nil {
		return b, fmt.Errorf("run the harness from bench/, below the provider's module (make bench does): %w", err)
	}
	for _, step := range []struct{ dir, dst, pkg string }{
		{providerRoot, filepath.Join(b.real, "terraform-provider-valkey"), "."},
		{".", filepath.Join(b.real, "terraform-provider-valkeyfloor"), "./floor"},
		{".", filepath.Join(b.wrap, "terraform-provider-valkey"), "./cmd/rsswrap"},
		{".", filepath.Join(b.wrap, "terraform-provider-valkeyfloor"), "./cmd/rsswrap"},
		{".", filepath.Join(b.prof, "terraform-provider-valkey"), "./cmd/valkeyprof"},
		{".", filepath.Join(b.prof, "terraform-provider-valkeyfloor"), "./floor"},
		{".", b.rpcrss, "./cmd/rpcrss"},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", step.dst, step.pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = step.dir, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return b, fmt.Errorf("go build %s in %s: %w", step.pkg, step.dir, err)
		}
	}
	return b, nil
}

func writeCLIConfig(path, overrideDir string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, fmt.Appendf(nil, `provider_installation {
  dev_overrides {
    "echomq/valkey"      = %q
    "echomq/valkeyfloor" = %q
  }
  direct {}
}
`, overrideDir, overrideDir), 0o644)
}
