package main

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scale scenarios (`make bench-scale`, not part of a full run or of CI): N groups over N/10
// streams in one configuration, N up to 10,000, ours beside the plugin floor, one scenario (and
// section of the report) per CLI and shape, so that each can be measured in a session of its
// own: scale-<CLI>-<shape>, on Terraform 1.5.7 and 1.16.4 (the oldest and newest CLI tested)
// and OpenTofu 1.12.6, in the two shapes platform teams write at that size: **count** (one
// block with count = N) and **module** (a module per stream, called with for_each over a map
// read from a .tfvars file, each calling for_each over its groups).
//
// A cycle, from an empty server and no state: apply (every group and stream created), a plan
// that must find no changes, a plan that adopts (the state set aside, every group on the server),
// and destroy (the groups stay on the server), the longest, last. Each command of ours runs beside the floor's same command,
// back to back, the order alternating. One repetition by default: a cycle at 10,000 takes most of
// an hour a subject. With perf on PATH, the apply at the largest N of the count shape runs
// under `perf record` for both subjects, which says where the time goes.

var (
	scaleSizes = flag.String("scale-sizes", "1000,10000", "comma-separated N for the scale scenarios (N groups over N/10 streams)")
	scaleReps  = flag.Int("scale-reps", 1, "timed repetitions of each scale cycle")
	scalePerf  = flag.Bool("scale-perf", true, "profile the apply at the largest N (count shape) with perf record, when perf is on PATH")
)

var (
	scaleOps      = []string{"apply", "refresh", "adopt", "destroy"} // destroy, the longest, last: a stopped run keeps the rest
	scaleSubjects = []string{"ours", "floor"}
)

// scaleTarget is the largest ratio allowed between ours and the floor, and scaleRSSTarget the
// largest ratio of ours' peak RSS at the largest N to that at the smallest.
const scaleTarget, scaleRSSTarget = 1.15, 1.2

var scaleOpLabels = map[string]string{"apply": "apply", "refresh": "no-change plan", "destroy": "destroy", "adopt": "plan that adopts"}

// optIn are the scenarios a full run leaves out (its report keeps their last sections): -only
// names them.
var optIn = func() []scenario {
	var all []scenario
	for _, cli := range []string{"terraform-1.5.7", "terraform-1.16.4", "tofu-1.12.6"} {
		for _, shape := range []string{"count", "module"} {
			all = append(all, scaleScenario{cli, shape})
		}
	}
	return all
}()

// scaleScenario is the scale scenario on one CLI, the binary of that name scripts/setup.sh
// builds into the tool cache, in one shape.
type scaleScenario struct{ cli, shape string }

func (s scaleScenario) name() string       { return "scale-" + s.cli + "-" + s.shape }
func (s scaleScenario) check(*bench) error { return checkCLI(s.bin()) }
func (s scaleScenario) bin() string        { return cachedTool(s.cli) }

func scaleDir(b *bench, cli, shape string, n int, sub string) string {
	return filepath.Join(b.out, "work", fmt.Sprintf("scale-%s-%s-n%d-%s", cli, shape, n, sub))
}

type scaleKey struct {
	shape   string
	n       int
	sub, op string
}

type scaleCell struct {
	shape string
	n     int
}

type scaleResults struct {
	cli      string
	sizes    []int
	shape    string
	reps     int
	samples  map[scaleKey][]opResult
	reached  map[scaleKey]int64 // groups on the server after ours' command
	profiles map[string]string  // subject -> the perf summary of its apply
	cells    []scaleCell        // measured so far, in order
	load     map[scaleKey]float64
}

func (s scaleScenario) run(ctx context.Context, b *bench) (string, error) {
	began, load := time.Now(), loadAvg()
	sizes := parseSizes("scale-sizes", *scaleSizes)
	reps := *scaleReps
	if b.quick {
		sizes, reps = sizes[:1], 1
	}
	shape, tf := s.shape, b.terraform(s.bin())
	res := &scaleResults{cli: version(s.bin(), tf.env(), "version"), sizes: sizes, shape: shape, reps: reps, samples: map[scaleKey][]opResult{},
		reached: map[scaleKey]int64{}, profiles: map[string]string{}, load: map[scaleKey]float64{}}
	_, perfErr := exec.LookPath("perf")
	for _, n := range sizes {
		for _, sub := range scaleSubjects {
			dir := scaleDir(b, s.cli, shape, n, sub)
			if err := writeScaleConfig(dir, sub == "floor", shape, n, n/10); err != nil {
				return "", err
			}
			if shape == "module" { // the module installed, untimed: `terraform get`, as init without the providers, which dev_overrides serve
				init := exec.CommandContext(ctx, tf.bin, "get", "-no-color")
				init.Dir, init.Env = dir, tf.env()
				if out, err := init.CombinedOutput(); err != nil {
					return "", fmt.Errorf("terraform get in %s: %w\n%s", dir, err, out)
				}
			}
		}
		res.cells = append(res.cells, scaleCell{shape, n})
		for rep := range reps {
			profile := *scalePerf && perfErr == nil && rep == 0 && shape == "count" && n == sizes[len(sizes)-1]
			label := fmt.Sprintf("rep %d/%d", rep+1, reps)
			progress := func(op string) error { // what is measured so far, marked as unfinished
				if b.partial == nil {
					return nil
				}
				return b.partial(s.name(), res.markdown(s.name(), began, load)+fmt.Sprintf("\n_Unfinished: measured up to %s, N=%d, %s, %s._\n", shape, n, scaleOpLabels[op], label))
			}
			if err := b.scaleCycle(ctx, tf, s.cli, res, shape, n, profile, label, progress); err != nil {
				return "", err
			}
		}
	}
	return res.markdown(s.name(), began, load), nil
}

// scaleCycle runs one cycle of both subjects, command by command, and checks what ours did.
// The plan that adopts runs with the state set aside, before destroy, which then finds it back.
func (b *bench) scaleCycle(ctx context.Context, tf *terraform, cli string, res *scaleResults, shape string, n int, profile bool, label string,
	progress func(op string) error) error {
	if err := b.rdb.FlushAll(ctx).Err(); err != nil {
		return err
	}
	for _, sub := range scaleSubjects {
		for _, f := range []string{"terraform.tfstate", "terraform.tfstate.backup"} {
			_ = os.Remove(filepath.Join(scaleDir(b, cli, shape, n, sub), f))
		}
	}
	for i, op := range scaleOps {
		for j := range scaleSubjects {
			sub := scaleSubjects[(i+j)%len(scaleSubjects)] // who goes first alternates
			k := scaleKey{shape, n, sub, op}
			res.load[k] = max(res.load[k], load1())
			logf("%s: %s %s N=%d %s %s", cli, label, shape, n, sub, scaleOpLabels[op])
			dir := scaleDir(b, cli, shape, n, sub)
			run := tf
			if profile && op == "apply" {
				run = tf.under("perf", "record", "-q", "-e", "cpu-clock", "-F", "99", "-g", "-o", filepath.Join(dir, "perf.data"), "--")
			}
			state := filepath.Join(dir, "terraform.tfstate")
			if op == "adopt" {
				if err := os.Rename(state, state+".aside"); err != nil {
					return err
				}
			}
			r, out, err := b.counted(ctx, run, dir, op, b.srv.Addr())
			if err != nil {
				return err
			}
			if op == "adopt" {
				if err := os.Rename(state+".aside", state); err != nil {
					return err
				}
			}
			if profile && op == "apply" {
				if res.profiles[sub], err = perfSummary(ctx, filepath.Join(dir, "perf.data"), tf.bin); err != nil {
					return err
				}
			}
			if sub == "ours" {
				if res.reached[k], err = b.checkScale(ctx, op, out, n); err != nil {
					return fmt.Errorf("%s in %s: %w", scaleOpLabels[op], dir, err)
				}
			}
			res.samples[k] = append(res.samples[k], r)
		}
		if err := progress(op); err != nil {
			return err
		}
	}
	return nil
}

// checkScale checks what one command of ours did: the groups the server holds after it (every
// one, after apply and after destroy, which leaves them), and the warnings it printed (none of a
// group after apply and the no-change plan, two per group after destroy, and a "Will Be Adopted"
// naming each group in the plan that adopts). It returns the groups on the server.
func (b *bench) checkScale(ctx context.Context, op string, out []byte, n int) (int64, error) {
	groups, err := groupsOnServer(ctx, b.rdb, n/10)
	if err != nil {
		return 0, err
	}
	if groups != int64(n) {
		return groups, fmt.Errorf("the server holds %d groups, want %d: every group must reach the server and stay there", groups, n)
	}
	warnings, named := groupWarnings(out)
	adopted := len(adoptWarning.FindAllIndex(out, -1))
	want := map[string]bool{
		"apply":   warnings == 0,
		"refresh": warnings == 0,
		"destroy": warnings == 2*n && named == n,
		"adopt":   warnings == n && named == n && adopted == n,
	}[op]
	if !want {
		return groups, fmt.Errorf("printed %d group warnings naming %d groups (%d of them Will Be Adopted)", warnings, named, adopted)
	}
	return groups, nil
}

var adoptWarning = regexp.MustCompile(`(?m)^Warning: Group "[^"]*" of "[^"]*" Will Be Adopted`)

// groupsOnServer counts the groups on the bench's k streams.
func groupsOnServer(ctx context.Context, rdb *redis.Client, k int) (int64, error) {
	var cmds []*redis.XInfoGroupsCmd
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range k {
			cmds = append(cmds, p.XInfoGroups(ctx, groupStream(i)))
		}
		return nil
	})
	var total int64
	for _, c := range cmds {
		if gs, e := c.Result(); e == nil {
			total += int64(len(gs))
		}
	}
	if err != nil && !strings.Contains(err.Error(), "no such key") {
		return total, err
	}
	return total, nil
}

// writeScaleConfig writes the configuration of ours or of the floor, in one shape, into dir: n
// groups over k streams, group g<i> on stream i mod k, every other one at "head".
func writeScaleConfig(dir string, floor bool, shape string, n, k int) error {
	provider := "valkey"
	if floor {
		provider = "valkeyfloor"
	}
	typ := provider + "_stream_group"
	required := fmt.Sprintf("terraform {\n  required_providers {\n    %s = { source = \"echomq/%s\" }\n  }\n}\n", provider, provider)
	files := map[string]string{}
	switch shape {
	case "count":
		files["main.tf"] = required + fmt.Sprintf(`
provider %q {}

resource %q "g" {
  count       = %d
  stream      = "bench:{s${count.index %% %d}}:stream"
  name        = "g${count.index}"
  group_start = count.index %% 2 == 0 ? "head" : "new"
}
`, provider, typ, n, k)
	case "module":
		files["main.tf"] = required + fmt.Sprintf(`
provider %q {}

variable "streams" {
  type = map(list(string))
}

module "stream" {
  source   = "./stream"
  for_each = var.streams
  stream   = each.key
  groups   = each.value
}
`, provider)
		files[filepath.Join("stream", "main.tf")] = required + fmt.Sprintf(`
variable "stream" {
  type = string
}

variable "groups" {
  type = list(string)
}

resource %q "g" {
  for_each    = toset(var.groups)
  stream      = var.stream
  name        = each.key
  group_start = tonumber(trimprefix(each.key, "g")) %% 2 == 0 ? "head" : "new"
}
`, typ)
		var vars strings.Builder
		vars.WriteString("streams = {\n")
		for s := range k {
			var gs []string
			for i := s; i < n; i += k {
				gs = append(gs, strconv.Quote(fmt.Sprintf("g%d", i)))
			}
			fmt.Fprintf(&vars, "  %q = [%s]\n", groupStream(s), strings.Join(gs, ", "))
		}
		vars.WriteString("}\n")
		files["streams.auto.tfvars"] = vars.String()
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// perfSummary reads a perf record of one command: the share of the samples of each process
// (Terraform, the provider) and the functions with the most samples of their own, and, with
// their callees, the functions that write Terraform's state as each resource completes. A CLI
// without a symbol table (a release build, linked with -s) has its functions named by address
// alone: the summary says so.
func perfSummary(ctx context.Context, data, cli string) (string, error) {
	report := func(args ...string) ([]string, error) {
		cmd := exec.CommandContext(ctx, "perf", append([]string{"report", "-i", data, "--stdio", "-g", "none", "--percent-limit", "1"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("perf report %s: %w: %s", strings.Join(args, " "), err, stderr.String())
		}
		var lines []string
		for l := range strings.SplitSeq(string(out), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		return lines, nil
	}
	var b strings.Builder
	comms, err := report("--no-children", "--sort", "comm")
	if err != nil {
		return "", err
	}
	b.WriteString("  - samples by process: " + strings.Join(comms, "; ") + "\n")
	self, err := report("--no-children", "--sort", "comm,sym")
	if err != nil {
		return "", err
	}
	if f, err := elf.Open(cli); err == nil {
		if _, err := f.Symbols(); errors.Is(err, elf.ErrNoSymbols) {
			b.WriteString("  - " + filepath.Base(cli) + " has no symbol table (linked with `-s`, as releases are), so perf names its functions by address: " +
				"a CLI built from source without `-s` (as tools/installcli builds when it cannot download) names them\n")
		}
		f.Close()
	}
	b.WriteString("  - most samples of their own:\n")
	for _, l := range self[:min(8, len(self))] {
		b.WriteString("    - `" + l + "`\n")
	}
	incl, err := report("--children", "--sort", "sym")
	if err != nil {
		return "", err
	}
	var state []string
	for _, l := range incl {
		if stateWriting.MatchString(l) {
			state = append(state, "`"+l+"`")
		}
	}
	if len(state) > 0 {
		b.WriteString("  - with their callees (children, self): " + strings.Join(state[:min(6, len(state))], "; ") + "\n")
	}
	return b.String(), nil
}

// stateWriting matches the functions of Terraform and OpenTofu that take and write a copy of the
// state after each resource: the StateHook, the state manager's WriteState, the deep copy.
var stateWriting = regexp.MustCompile(`PostStateUpdate|\)\.WriteState$|states\.\(\*State\)\.DeepCopy$|\(\*SyncState\)\.Lock$`)

// under returns a runner that starts the CLI as the last argument of prefix (perf record --).
func (tf *terraform) under(prefix ...string) *terraform {
	t := *tf
	t.prefix = prefix
	return &t
}

func (r *scaleResults) value(k scaleKey, of func(opResult) float64) spread {
	return over(r.samples[k], of)
}

func (r *scaleResults) ratio(shape string, n int, op string, of func(opResult) float64) spread {
	return paired(r.samples[scaleKey{shape, n, "ours", op}], r.samples[scaleKey{shape, n, "floor", op}], of)
}

func (r *scaleResults) markdown(name string, began time.Time, load string) string {
	var b strings.Builder
	perf := ""
	if !*scalePerf {
		perf = " -scale-perf=false"
	}
	b.WriteString(sectionHead(fmt.Sprintf("Scale on %s: %s groups, %s", r.cli, commaSizes(r.sizes), r.shape), began, load, r.cli,
		fmt.Sprintf("%d timed repetition(s); `terraform -parallelism=10`; reproduce: `BENCH_FLAGS=\"-only %s -scale-sizes %s -scale-reps %d%s\" make bench-scale`",
			r.reps, name, *scaleSizes, r.reps, perf)))
	b.WriteString(scaleShapes[r.shape] + scaleMethod)
	b.WriteString("### Targets\n\n")
	b.WriteString(r.targets())
	b.WriteString("\n### Time per command\n\n")
	b.WriteString("`CPU` is user+sys of the CLI and the providers; `provider CPU` that of the provider processes alone. ")
	b.WriteString("`load` is the largest 1-minute load average as the pair of commands began.\n\n")
	b.WriteString("| shape | N | command | ours | plugin floor | ours / floor | ours / floor, CPU | provider CPU, ours | provider CPU, floor | load |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.cells {
		shape, n := c.shape, c.n
		for _, op := range r.measured(shape, n) {
			ours, floor := scaleKey{shape, n, "ours", op}, scaleKey{shape, n, "floor", op}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %.2fx | %s | %s | %.1f |\n", shape, n, scaleOpLabels[op],
				secs(r.value(ours, opResult.wallSecs)), secs(r.value(floor, opResult.wallSecs)),
				times(r.ratio(shape, n, op, opResult.wallSecs)), r.ratio(shape, n, op, opResult.cpuSecs).med,
				secs(r.value(ours, opResult.pluginSecs)), secs(r.value(floor, opResult.pluginSecs)), max(r.load[ours], r.load[floor]))
		}
	}
	b.WriteString("\n### Provider peak RSS, MiB: median (min–max)\n\n| shape | command |")
	for _, n := range r.sizes {
		fmt.Fprintf(&b, " ours, N=%d |", n)
	}
	b.WriteString(" largest / smallest N | floor, largest N |\n|---|---|" + strings.Repeat("---|", len(r.sizes)+2) + "\n")
	for _, op := range scaleOps {
		fmt.Fprintf(&b, "| %s | %s |", r.shape, scaleOpLabels[op])
		largest := r.sizes[len(r.sizes)-1]
		for _, n := range r.sizes {
			fmt.Fprintf(&b, " %s |", r.rss(scaleKey{r.shape, n, "ours", op}))
		}
		growth := "–"
		if g := r.rssGrowth(r.shape, op); g > 0 {
			growth = fmt.Sprintf("%.2fx", g)
		}
		fmt.Fprintf(&b, " %s | %s |\n", growth, r.rss(scaleKey{r.shape, largest, "floor", op}))
	}
	if len(r.profiles) > 0 {
		fmt.Fprintf(&b, "\n### Where the apply's time goes: `perf record -e cpu-clock -F 99 -g`, count, N=%d\n\n", r.sizes[len(r.sizes)-1])
		for _, sub := range scaleSubjects {
			if p, ok := r.profiles[sub]; ok {
				fmt.Fprintf(&b, "- %s:\n%s", map[string]string{"ours": "ours", "floor": "plugin floor"}[sub], p)
			}
		}
	}
	return b.String()
}

// measured are the commands of a cell both subjects have run.
func (r *scaleResults) measured(shape string, n int) []string {
	var ops []string
	for _, op := range scaleOps {
		if len(r.samples[scaleKey{shape, n, "ours", op}]) > 0 && len(r.samples[scaleKey{shape, n, "floor", op}]) > 0 {
			ops = append(ops, op)
		}
	}
	return ops
}

// rss is a peak RSS cell of the table: "not measured" before its command has run.
func (r *scaleResults) rss(k scaleKey) string {
	if len(r.samples[k]) == 0 {
		return "not measured"
	}
	return mib(r.value(k, opResult.rssMiB))
}

// rssGrowth is ours' median peak RSS at the largest N over that at the smallest; 0 with one N.
func (r *scaleResults) rssGrowth(shape, op string) float64 {
	if len(r.sizes) < 2 {
		return 0
	}
	lo := r.value(scaleKey{shape, r.sizes[0], "ours", op}, opResult.rssMiB).med
	hi := r.value(scaleKey{shape, r.sizes[len(r.sizes)-1], "ours", op}, opResult.rssMiB).med
	if lo == 0 || hi == 0 {
		return 0
	}
	return hi / lo
}

func (r *scaleResults) targets() string {
	var b strings.Builder
	var missed []string
	checked, worst := 0, 0.0
	for _, c := range r.cells {
		shape, n := c.shape, c.n
		for _, op := range r.measured(shape, n) {
			m := r.ratio(shape, n, op, opResult.wallSecs).med
			checked++
			worst = max(worst, m)
			if m > scaleTarget {
				missed = append(missed, fmt.Sprintf("%s, N=%d, %s: %.2fx (CPU %.2fx)", shape, n, scaleOpLabels[op], m, r.ratio(shape, n, op, opResult.cpuSecs).med))
			}
		}
	}
	fmt.Fprintf(&b, "- Every command of ours within %.2fx of the plugin floor's (wall, %d ratios: %d sizes, 4 commands): %s — %d of %d within, the largest %.2fx.\n",
		scaleTarget, checked, len(r.cells), verdict(len(missed) == 0), checked-len(missed), checked, worst)
	for _, m := range missed {
		b.WriteString("  - over: " + m + "\n")
	}
	if len(r.sizes) >= 2 {
		growth, measured := 0.0, []string{}
		for _, c := range r.cells {
			if c.n != r.sizes[len(r.sizes)-1] {
				continue
			}
			measured = append(measured, c.shape)
			for _, op := range r.measured(c.shape, c.n) {
				growth = max(growth, r.rssGrowth(c.shape, op))
			}
		}
		if len(measured) == 0 {
			fmt.Fprintf(&b, "- Provider peak RSS at N=%d within %.1fx of that at N=%d: not measured yet.\n", r.sizes[len(r.sizes)-1], scaleRSSTarget, r.sizes[0])
		} else {
			fmt.Fprintf(&b, "- Provider peak RSS at N=%d within %.1fx of that at N=%d, every command (%s): %s — at most %.2fx.\n",
				r.sizes[len(r.sizes)-1], scaleRSSTarget, r.sizes[0], strings.Join(measured, ", "), verdict(growth <= scaleRSSTarget), growth)
		}
	}
	fmt.Fprintf(&b, "- Every group reached the server and stayed: **met** — after each apply, no-change plan, destroy and plan that adopts of ours, "+
		"the server held all N groups (`XINFO GROUPS` on each stream), and each command printed the group warnings `checkScale` says (a run that does not stops the bench).\n")
	return b.String()
}

func commaSizes(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, " and ")
}

// scaleShapes says how each shape writes the N groups: the first line of a section's method.
var scaleShapes = map[string]string{
	"count": "- N `valkey_stream_group` resources over N/10 streams (group `g<i>` on stream `bench:{s<i mod N/10>}:stream`, every\n" +
		"  other one at `\"head\"`), in the **count** shape: one block with `count = N`.\n",
	"module": "- N `valkey_stream_group` resources over N/10 streams (group `g<i>` on stream `bench:{s<i mod N/10>}:stream`, every\n" +
		"  other one at `\"head\"`), in the **module** shape: a module per stream, called with `for_each` over a map read\n" +
		"  from a `.tfvars` file, each with `for_each` over its ten groups.\n",
}

var scaleMethod = `- Two subjects: **ours**, and the **plugin floor** (` + "`bench/floor`" + `: our schemas, sends and says nothing). Each command of
  ours runs beside the floor's same command, back to back, who goes first alternating.
- A cycle, from an empty server and no state: **apply** (every group created with its stream: ` + "`MKSTREAM`" + `), a **no-change
  plan**, a **plan that adopts** (the state set aside, every group already on the server: each warned ` + "`Will Be Adopted`" + `), and
  **destroy** (Delete only forgets: the groups stay, and each is warned twice). After each command of ours the harness counts
  the groups on the server and the warnings printed (` + "`checkScale`" + `).
- Wall time is the command end to end; CPU is user+sys of the CLI and every process it waited for; provider CPU and peak
  RSS come from ` + "`bench/cmd/rsswrap`" + `. One repetition by default (` + "`-scale-reps`" + `): a ratio is one pair of runs, on a
  machine shared with other work (see each pair's load).

`
