package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

type envInfo struct {
	Date, CPU, Kernel, Go, Terraform, Valkey string
	Cores                                    int
	LoadStart, LoadEnd                       string
	Reps, RepsDone, Parallelism              int
	Elapsed                                  time.Duration
}

func (e envInfo) summary() string {
	return fmt.Sprintf("%d cores, %s, %s, %s", e.Cores, e.Go, e.Terraform, e.Valkey)
}

func machineInfo(cfg config, tf *terraform) envInfo {
	e := envInfo{
		Date:        time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Cores:       runtime.NumCPU(),
		Go:          version("go", nil, "version"),
		Terraform:   version(tf.bin, tf.env(), "version"),
		Valkey:      valkeyVersion(),
		LoadStart:   loadAvg(),
		Reps:        cfg.reps,
		Parallelism: cfg.parallelism,
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	return e
}

func valkeyVersion() string {
	bin, err := valkeytest.Binary()
	if err != nil {
		return "valkey-server unknown"
	}
	v := version(bin, nil, "--version")
	if before, _, ok := strings.Cut(v, " sha="); ok {
		return before
	}
	return v
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

type sampleKey struct {
	sh      shape
	sub, op string
}

type tripCount struct {
	trips map[string]int64 // round trips by the commands they carried
	conns int64
	cmds  map[string]int64
}

func (t tripCount) total() int64 {
	var n int64
	for _, v := range t.trips {
		n += v
	}
	return n
}

// describe lists the round trips by what they carried, most frequent first.
func (t tripCount) describe() string {
	sigs := slices.Collect(maps.Keys(t.trips))
	slices.SortFunc(sigs, func(a, b string) int {
		if t.trips[a] != t.trips[b] {
			return int(t.trips[b] - t.trips[a])
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, s := range sigs {
		parts = append(parts, fmt.Sprintf("%d × [%s]", t.trips[s], s))
	}
	return strings.Join(parts, ", ")
}

type results struct {
	Env      envInfo
	shapes   []shape
	samples  map[sampleKey][]opResult
	cmds     map[sampleKey][]map[string]int64
	trips    map[sampleKey]tripCount
	profiles []profileTop
	rss      map[rssKey]opResult
	logCheck *logCheck
	rpcTable string // bench/cmd/rpcrss's output
	query    *queryResults
	cluster  *clusterResults
}

type profileTop struct {
	title, top string
}

func newResults(env envInfo, shapes []shape) *results {
	return &results{Env: env, shapes: shapes, samples: map[sampleKey][]opResult{},
		cmds: map[sampleKey][]map[string]int64{}, trips: map[sampleKey]tripCount{}, rss: map[rssKey]opResult{}}
}

func (r *results) add(sh shape, sub, op string, res opResult, cmds map[string]int64) {
	k := sampleKey{sh, sub, op}
	r.samples[k] = append(r.samples[k], res)
	r.cmds[k] = append(r.cmds[k], cmds)
}

func (r *results) addTrips(sh shape, op string, trips map[string]int64, conns int64, cmds map[string]int64) {
	r.trips[sampleKey{sh, "ours", op}] = tripCount{trips, conns, cmds}
}

// spread is a median with its range.
type spread struct{ med, lo, hi float64 }

func summarize(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{med, s[0], s[len(s)-1]}
}

func (r *results) wall(k sampleKey) spread {
	var xs []float64
	for _, s := range r.samples[k] {
		xs = append(xs, s.Wall.Seconds())
	}
	return summarize(xs)
}

// ratio pairs ours with the plugin floor repetition by repetition (they ran back to back),
// which cancels most of the load other processes put on the machine.
func (r *results) ratio(sh shape, op string, cpu bool) spread {
	ours, floor := r.samples[sampleKey{sh, "ours", op}], r.samples[sampleKey{sh, "plugin", op}]
	var xs []float64
	for i := range min(len(ours), len(floor)) {
		a, b := ours[i].Wall, floor[i].Wall
		if cpu {
			a, b = ours[i].CPU, floor[i].CPU
		}
		if b > 0 {
			xs = append(xs, float64(a)/float64(b))
		}
	}
	return summarize(xs)
}

// cpu is the providers' CPU time (plugin) or Terraform's own (everything else), in seconds.
func (r *results) cpu(k sampleKey, plugin bool) spread {
	var xs []float64
	for _, s := range r.samples[k] {
		if plugin {
			xs = append(xs, s.PluginCPU.Seconds())
		} else {
			xs = append(xs, (s.CPU - s.PluginCPU).Seconds())
		}
	}
	return summarize(xs)
}

func (r *results) rssMiB(k sampleKey) spread {
	var xs []float64
	for _, s := range r.samples[k] {
		xs = append(xs, float64(s.RSSKiB)/1024)
	}
	return summarize(xs)
}

// commands is the median count of each command over the repetitions.
func (r *results) commands(k sampleKey) (total float64, by map[string]float64) {
	return medianCommands(r.cmds[k])
}

// medianCommands is the median of the total and of each command's count over runs.
func medianCommands(runs []map[string]int64) (total float64, by map[string]float64) {
	by = map[string]float64{}
	names := map[string]bool{}
	for _, c := range runs {
		for n := range c {
			names[n] = true
		}
	}
	var totals []float64
	for _, c := range runs {
		var t int64
		for _, v := range c {
			t += v
		}
		totals = append(totals, float64(t))
	}
	for n := range names {
		var xs []float64
		for _, c := range runs {
			xs = append(xs, float64(c[n]))
		}
		by[n] = summarize(xs).med
	}
	return summarize(totals).med, by
}

func secs(s spread) string {
	return fmt.Sprintf("%.2f s (%.2f–%.2f)", s.med, s.lo, s.hi)
}

func times(s spread) string {
	return fmt.Sprintf("%.3fx (%.2f–%.2f)", s.med, s.lo, s.hi)
}

func breakdown(by map[string]float64) string {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(by)) {
		if by[n] > 0 {
			parts = append(parts, fmt.Sprintf("`%s` %g", strings.ToUpper(n), by[n]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

type rendered struct{ tables, full string }

func (r *results) markdown(cfg config) rendered {
	var t strings.Builder
	if r.Env.RepsDone > 0 {
		r.timedTables(&t)
	}
	t.WriteString(r.rssTable(cfg.rssSizes))
	if r.rpcTable != "" {
		t.WriteString("\n### The plugin stack without Terraform (`bench/cmd/rpcrss`)\n\n")
		t.WriteString(r.rpcTable)
	}
	tables := t.String()

	var f strings.Builder
	f.WriteString("# Benchmarks\n\n")
	f.WriteString("Generated by `make bench` (`bench/cmd/bench`, run from bench/); rerun it to refresh every number below. The hand-written analysis at the end is `bench/notes.md`.\n\n")
	f.WriteString("## Machine and versions\n\n")
	fmt.Fprintf(&f, "- Date: %s; run took %s\n", r.Env.Date, r.Env.Elapsed)
	fmt.Fprintf(&f, "- CPU: %d cores (%s), %s\n", r.Env.Cores, r.Env.CPU, r.Env.Kernel)
	fmt.Fprintf(&f, "- %s\n- %s\n- %s (one server on loopback, persistence off)\n", r.Env.Go, r.Env.Terraform, r.Env.Valkey)
	fmt.Fprintf(&f, "- Load average (1, 5, 15 min) at start: %s; at end: %s\n", r.Env.LoadStart, r.Env.LoadEnd)
	fmt.Fprintf(&f, "- `terraform -parallelism=%d`, %d of %d timed repetitions done\n\n", r.Env.Parallelism, r.Env.RepsDone, r.Env.Reps)
	f.WriteString(method)
	f.WriteString("## Targets\n\n")
	f.WriteString(r.targets(cfg))
	f.WriteString("\n## Results\n\n")
	f.WriteString(tables)
	if len(r.profiles) > 0 {
		f.WriteString("\n## CPU profiles (`-pprof`)\n\n")
		for _, p := range r.profiles {
			fmt.Fprintf(&f, "<details><summary>%s</summary>\n\n```\n%s```\n\n</details>\n\n", p.title, p.top)
		}
	}
	if r.cluster != nil {
		section := r.cluster.markdown()
		tables += "\n" + section
		f.WriteString("\n" + section)
	}
	if r.query != nil {
		section := r.query.markdown()
		tables += "\n" + section
		f.WriteString("\n" + section)
	}
	if b, err := os.ReadFile(cfg.notes); err == nil {
		f.WriteString("\n")
		f.Write(b)
	}
	return rendered{tables: tables, full: f.String()}
}

// timedTables renders the timed repetitions: time, server work, and provider processes.
func (r *results) timedTables(t *strings.Builder) {
	fmt.Fprintf(t, "### Time per Terraform command: median (min–max) over %d runs\n\n", r.Env.RepsDone)
	t.WriteString("| Shape | Command | valkey (ours) | plugin floor | core floor | ours / plugin floor, wall | ours / plugin floor, CPU | plugin floor / core floor |\n")
	t.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, sh := range r.shapes {
		for _, op := range ops {
			o, p, c := r.wall(sampleKey{sh, "ours", op}), r.wall(sampleKey{sh, "plugin", op}), r.wall(sampleKey{sh, "core", op})
			core, coreRatio := "—", "—"
			if c.med > 0 {
				core, coreRatio = secs(c), fmt.Sprintf("%.1fx", p.med/c.med)
			}
			fmt.Fprintf(t, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", sh, op, secs(o), secs(p), core,
				times(r.ratio(sh, op, false)), times(r.ratio(sh, op, true)), coreRatio)
		}
	}
	t.WriteString("\n### Server work per command (ours)\n\n")
	t.WriteString("Commands: median over the timed runs. Round trips: the extra proxied run, grouped by the commands each carried.\n\n")
	t.WriteString("| Shape | Command | server commands | by command | round trips | round trips by what they carried | connections |\n")
	t.WriteString("|---|---|---|---|---|---|---|\n")
	for _, sh := range r.shapes {
		for _, op := range ops {
			k := sampleKey{sh, "ours", op}
			total, by := r.commands(k)
			tc := r.trips[k]
			fmt.Fprintf(t, "| %s | %s | %g | %s | %d | %s | %d |\n", sh, op, total, breakdown(by), tc.total(), tc.describe(), tc.conns)
		}
	}
	t.WriteString("\n### Provider processes: peak RSS and CPU (median)\n\n")
	t.WriteString("| Shape | Command | peak RSS ours, MiB | peak RSS plugin floor, MiB | provider CPU ours, s | provider CPU plugin floor, s | Terraform CPU ours, s | Terraform CPU plugin floor, s | provider processes |\n")
	t.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, sh := range r.shapes {
		for _, op := range ops {
			o, p := sampleKey{sh, "ours", op}, sampleKey{sh, "plugin", op}
			procs := 0
			if s := r.samples[o]; len(s) > 0 {
				procs = s[0].Plugins
			}
			fmt.Fprintf(t, "| %s | %s | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %d |\n", sh, op, r.rssMiB(o).med, r.rssMiB(p).med,
				r.cpu(o, true).med, r.cpu(p, true).med, r.cpu(o, false).med, r.cpu(p, false).med, procs)
		}
	}
}

const method = `## What is measured

- **valkey (ours)**: N ` + "`valkey_stream_group`" + ` resources over K streams (group ` + "`g<i>`" + ` on stream
  ` + "`bench:{s<i mod K>}:stream`" + `, ` + "`group_start = \"new\"`" + `), K = N/10 (ten groups per stream) and K = N.
  The server is flushed before each apply, so every Create really creates.
- **plugin floor**: the same configuration against ` + "`bench/floor`" + `, a framework provider whose provider and
  resource schemas are the real ones (same validators and plan modifiers) and which sends no command.
  Everything above it is ours.
- **core floor**: N ` + "`terraform_data`" + ` resources with the same values (no plugin process), for context only;
  run at K = N/10 only, since K changes nothing but strings for it.
- Each repetition runs ` + "`apply`" + `, a no-change ` + "`plan`" + ` (with refresh; it must exit 0) and ` + "`destroy`" + ` for every
  subject and shape, rotating the order of subjects from one repetition to the next. Ratios pair ours
  with the floor run next to it in the same repetition and report the median of those ratios.
- Wall time is the Terraform command end to end. CPU is user+sys of Terraform and every process it
  waited for (the providers); it is less sensitive to other load on the machine than wall time.
- Server commands: ` + "`CONFIG RESETSTAT`" + ` before and ` + "`INFO commandstats`" + ` after each command.
- Round trips: one extra, untimed apply/plan/destroy of ours per shape through a loopback proxy that
  counts, per connection, each burst of client bytes that follows a server reply (a pipeline written
  at once is one round trip).
- Peak RSS: both provider binaries run behind ` + "`bench/cmd/rsswrap`" + ` (named in ` + "`dev_overrides`" + `), which
  reports the kernel's maxrss of the provider process when it exits; the table shows the largest
  provider process of the command. The wrapper costs both subjects the same one extra exec.
- Peak RSS per resource: after the timed runs, one apply, no-change plan and destroy of ours and of
  the plugin floor at each ` + "`-rss-sizes`" + ` N (K = N/10), measured as above. The kernel's maxrss does not
  swing with load as time does, so one run per size is enough. The target: the peak at the largest N
  within 1.2x of the peak at the smallest.
- Logs: one apply of ours (N = 10, K = 1) with ` + "`TF_LOG=TRACE`" + `, counting our provider's own ` + "`group door`" + `
  debug line (one per Create) and the SDK's ` + "`@module=sdk.proto`" + ` and ` + "`@module=sdk.framework`" + ` lines in
  Terraform's output.
- The plugin stack without Terraform: ` + "`bench/cmd/rpcrss`" + ` starts a provider as Terraform does (go-plugin,
  gRPC, AutoMTLS), sends it N GetMetadata requests ten at a time, and reads its peak RSS, its live heap
  after a GC and the framework's count of held request contexts, for a bare terraform-plugin-go
  provider, an empty framework provider served as upstream documents, and the same provider served
  the way ours is (` + "`pluginserver.ReleaseEnded`" + `).

`

// targets checks the targets at the largest N.
func (r *results) targets(cfg config) string {
	var b strings.Builder
	largest := r.shapes[len(r.shapes)-1].N
	verdict := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "**missed**"
	}
	for _, sh := range r.shapes {
		if sh.N != largest || r.Env.RepsDone == 0 {
			continue
		}
		for _, op := range []string{"apply", "plan"} {
			w, c := r.ratio(sh, op, false), r.ratio(sh, op, true)
			fmt.Fprintf(&b, "- %s at %s within 1.05x of the plugin floor: %s — wall %.3fx (range %.2f–%.2f), CPU %.3fx",
				op, sh, verdict(w.med <= 1.05), w.med, w.lo, w.hi, c.med)
			if w.med > 1.05 {
				fmt.Fprintf(&b, "; over by %.1f%% of the floor", (w.med-1.05)*100)
			}
			b.WriteString(".\n")
		}
	}
	for _, sh := range r.shapes {
		tc, ok := r.trips[sampleKey{sh, "ours", "apply"}]
		if !ok {
			continue
		}
		var creates, withReadBack int64
		for sig, n := range tc.trips {
			if strings.Contains(sig, "XGROUP CREATE") {
				creates += n * int64(strings.Count(sig, "XGROUP CREATE"))
				if sig == "XGROUP CREATE + XINFO GROUPS" {
					withReadBack += n
				}
			}
		}
		fmt.Fprintf(&b, "- Create costs one round trip, %s: %s — %d of %d Creates went out as one round trip carrying `XGROUP CREATE` and its `XINFO GROUPS` read-back. The whole apply took %d round trips (%.2f per group): %s.\n",
			sh, verdict(withReadBack == int64(sh.N) && creates == int64(sh.N)), withReadBack, sh.N, tc.total(), float64(tc.total())/float64(sh.N), tc.describe())
	}
	for _, sh := range r.shapes {
		if sh.K == sh.N || r.Env.RepsDone == 0 {
			continue
		}
		_, by := r.commands(sampleKey{sh, "ours", "plan"})
		g := sh.N / sh.K
		per := by["xinfo|groups"] / float64(sh.K)
		fmt.Fprintf(&b, "- Refreshing G = %d groups on one stream, %s: %s — %g `XINFO GROUPS` for %d streams in a no-change plan (%.2f per stream, against %d without sharing).\n",
			g, sh, verdict(per <= float64(g)/4), by["xinfo|groups"], sh.K, per, g)
	}
	var peak float64
	for _, sh := range r.shapes {
		if sh.N != largest {
			continue
		}
		for _, op := range ops {
			peak = max(peak, r.rssMiB(sampleKey{sh, "ours", op}).hi)
		}
	}
	if peak > 0 {
		fmt.Fprintf(&b, "- Provider RSS under 50 MB at N = %d: %s — largest peak %.1f MiB (%.1f MB).\n", largest, verdict(peak*1.048576 < 50), peak, peak*1.048576)
	}
	b.WriteString(r.rssTargets(cfg.rssSizes, verdict))
	b.WriteString(r.logCheck.target(verdict))
	return b.String()
}

// profile runs one cycle of ours and of the plugin floor at the largest N with CPU profiles,
// and keeps pprof's top functions per command.
func profile(ctx context.Context, cfg config, out string, bins binaries, base *terraform, rdb *redis.Client, url string, res *results) error {
	tf := *base
	tf.realDir = bins.prof
	largest := cfg.sizes[len(cfg.sizes)-1]
	sh := shape{largest, largest / 10}
	if err := os.RemoveAll(filepath.Join(out, "pprof")); err != nil {
		return err
	}
	for _, sub := range subjects[:2] {
		dir := filepath.Join(out, "work", fmt.Sprintf("%s-n%d-k%d", sub.key, sh.N, sh.K))
		if err := rdb.FlushAll(ctx).Err(); err != nil {
			return err
		}
		for _, op := range ops {
			pdir := filepath.Join(out, "pprof", sub.key+"-"+op)
			if err := os.MkdirAll(pdir, 0o755); err != nil {
				return err
			}
			logf("profile %s %s %s", sh, sub.label, op)
			if _, err := tf.run(ctx, dir, op, "VALKEY_URL="+url, "BENCH_CPUPROFILE_DIR="+pdir); err != nil {
				return err
			}
			files, _ := filepath.Glob(filepath.Join(pdir, "*-[0-9]*[0-9].pprof")) // CPU profiles, not heap
			if len(files) == 0 {
				continue
			}
			args := append([]string{"tool", "pprof", "-top", "-cum", "-nodecount=40"}, files...)
			top, err := exec.CommandContext(ctx, "go", args...).Output()
			if err != nil {
				return fmt.Errorf("go tool pprof: %w", err)
			}
			shown := pdir
			if wd, err := os.Getwd(); err == nil {
				if rel, err := filepath.Rel(wd, pdir); err == nil {
					shown = rel
				}
			}
			res.profiles = append(res.profiles, profileTop{
				title: fmt.Sprintf("%s, %s, %s (%d processes; profiles in %s)", sub.label, op, sh, len(files), shown),
				top:   string(top),
			})
		}
	}
	return nil
}
