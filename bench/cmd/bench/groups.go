package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
)

// The groups scenario: plan (of creates), apply, refresh (a plan with no changes) and destroy of
// N valkey_stream_group resources over N/10 streams, for three subjects side by side:
//
//   - warned: ours, on streams that hold entries, so that every group is warned (its replay or
//     its skip, in the plan and again in the apply's own plan; destroy warns for every group);
//   - quiet: ours, on streams that exist and are empty, so that no plan warns (destroy still does);
//   - floor: the plugin floor (bench/floor), which sends and says nothing.
//
// in two shapes of configuration (blocks: one resource block per group in one file, as
// `terraform query -generate-config-out` writes; for_each: one block over a map read from a
// .tfvars file), on each CLI of -terraform.

var (
	groupSizes = flag.String("sizes", "250,1000,2500", "comma-separated N for the groups scenario (N groups over N/10 streams)")
	groupCLIs  = flag.String("terraform", cachedTool("terraform-1.5.7"),
		"comma-separated Terraform binaries for the groups scenario; the first also runs the cluster scenario (make bench passes the 1.5.7 and 1.16.4 that scripts/setup.sh builds)")
)

const entriesPerStream = 3 // on the warned subject's streams

var (
	groupOps      = []string{"plan", "apply", "refresh", "destroy"}
	groupShapes   = []string{"blocks", "for_each"}
	groupSubjects = []string{"warned", "quiet", "floor"}
)

// groupCell is one configuration: a CLI (its version), a shape, a size.
type groupCell struct {
	cli, shape string
	n          int
}

type groupKey struct {
	groupCell
	subject, op string
}

type groupResults struct {
	clis             []string
	tfs              []*terraform // one per CLI
	sizes            []int
	shapes, subjects []string
	reps             int
	samples          map[groupKey][]opResult
	trips            map[groupKey]tripCount // the first CLI, blocks, warned
	dirs             map[groupKey]string    // each cell's and subject's configuration (op "")
	peakLoad         map[groupCell]float64  // the largest 1-minute load average seen as a cycle of the cell began
}

type groupsScenario struct{}

func (groupsScenario) name() string { return "groups" }

// check fails early, before any measuring, when a CLI is missing.
func (groupsScenario) check(*bench) error {
	for bin := range strings.SplitSeq(*groupCLIs, ",") {
		if err := checkCLI(bin); err != nil {
			return err
		}
	}
	return nil
}

// checkCLI fails when a CLI of -terraform is missing.
func checkCLI(bin string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("the CLI %s is missing: build it with scripts/setup.sh (make bench does), or name others with -terraform", bin)
	}
	return nil
}

func (groupsScenario) run(ctx context.Context, b *bench) (string, error) {
	began, load := time.Now(), loadAvg()
	sizes, bins := parseSizes("sizes", *groupSizes), strings.Split(*groupCLIs, ",")
	if b.quick {
		sizes, bins = sizes[:1], bins[:1]
	}
	res, err := b.measureGroups(ctx, groupRun{sizes: sizes, clis: bins, shapes: groupShapes, subjects: groupSubjects, trips: true})
	if err != nil {
		return "", err
	}
	return res.markdown(began, load), nil
}

// groupRun is what measureGroups measures: the full scenario's or the perf gate's (gate.go).
type groupRun struct {
	sizes            []int
	clis             []string // binaries
	shapes, subjects []string
	trips            bool // one more cycle through the counting proxy, on the first CLI
	noWarmUp         bool // no untimed cycle of each subject first
}

// measureGroups runs b.reps repetitions of a cycle of each subject, for each CLI, shape and
// size, after an untimed warm-up, side by side: within a repetition the subjects of one cell
// run back to back, in an order that rotates.
func (b *bench) measureGroups(ctx context.Context, g groupRun) (*groupResults, error) {
	res := &groupResults{sizes: g.sizes, shapes: g.shapes, subjects: g.subjects, reps: b.reps,
		samples: map[groupKey][]opResult{}, trips: map[groupKey]tripCount{}, dirs: map[groupKey]string{}, peakLoad: map[groupCell]float64{}}
	for ci, bin := range g.clis {
		tf := b.terraform(bin)
		cli := version(bin, tf.env(), "version")
		res.clis = append(res.clis, cli)
		res.tfs = append(res.tfs, tf)
		var cells []groupCell
		for _, n := range res.sizes {
			for _, shape := range res.shapes {
				cell := groupCell{cli, shape, n}
				cells = append(cells, cell)
				for _, sub := range res.subjects {
					dir := filepath.Join(b.out, "work", fmt.Sprintf("cli%d-%s-n%d-%s", ci, shape, n, sub))
					if err := writeGroupConfig(dir, sub == "floor", shape, n, n/10); err != nil {
						return nil, err
					}
					res.dirs[groupKey{cell, sub, ""}] = dir
				}
			}
		}
		for _, sub := range res.subjects { // untimed: the page cache, and Terraform's first-run work
			if g.noWarmUp {
				break
			}
			logf("groups: %s, warm-up, %s", cli, sub)
			if err := b.groupCycle(ctx, tf, res.dirs[groupKey{cells[0], sub, ""}], sub, cells[0].n, b.srv.Addr(), nil); err != nil {
				return nil, fmt.Errorf("warm-up: %w", err)
			}
		}
		for rep := range b.reps {
			for i, cell := range cells {
				if err := b.groupReps(ctx, tf, res, cell, rep, i, fmt.Sprintf("rep %d/%d", rep+1, b.reps)); err != nil {
					return nil, err
				}
			}
		}
		if ci == 0 && g.trips {
			if err := b.countTrips(ctx, tf, cells, res.dirs, res); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// groupReps runs one timed cycle of each subject of cell, back to back, starting with subject
// (rep+i) mod the number of subjects, and records them.
func (b *bench) groupReps(ctx context.Context, tf *terraform, res *groupResults, cell groupCell, rep, i int, label string) error {
	for j := range res.subjects { // the order rotates from one repetition to the next
		res.peakLoad[cell] = max(res.peakLoad[cell], load1())
		sub := res.subjects[(j+i+rep)%len(res.subjects)]
		logf("groups: %s %s %s N=%d %s", label, cell.cli, cell.shape, cell.n, sub)
		record := func(op string, s opResult) {
			k := groupKey{cell, sub, op}
			res.samples[k] = append(res.samples[k], s)
		}
		if err := b.groupCycle(ctx, tf, res.dirs[groupKey{cell, sub, ""}], sub, cell.n, b.srv.Addr(), record); err != nil {
			return err
		}
	}
	return nil
}

// countTrips runs one more cycle of the warned subject per size (blocks) through the counting
// proxy, untimed.
func (b *bench) countTrips(ctx context.Context, tf *terraform, cells []groupCell, dirs map[groupKey]string, res *groupResults) error {
	proxy, err := faultproxy.StartProxy(b.srv.Addr())
	if err != nil {
		return err
	}
	defer proxy.Close()
	for _, cell := range cells {
		if cell.shape != "blocks" {
			continue
		}
		logf("groups: round trips N=%d", cell.n)
		proxy.Take()
		record := func(op string, s opResult) {
			trips, conns := proxy.Take()
			res.trips[groupKey{cell, "warned", op}] = tripCount{trips, conns, s.cmds}
		}
		if err := b.groupCycle(ctx, tf, dirs[groupKey{cell, "warned", ""}], "warned", cell.n, proxy.Addr(), record); err != nil {
			return err
		}
	}
	return nil
}

// groupCycle seeds the server for sub, then runs each of groupOps in dir, with the server's
// counts around each, checks the group warnings each printed, and hands each to record (nil
// for a warm-up).
func (b *bench) groupCycle(ctx context.Context, tf *terraform, dir, sub string, n int, addr string, record func(string, opResult)) error {
	if sub != "floor" {
		if err := seedGroupStreams(ctx, b.rdb, n/10, sub == "warned"); err != nil {
			return err
		}
	}
	for _, op := range groupOps {
		r, out, err := b.counted(ctx, tf, dir, op, addr)
		if err != nil {
			return err
		}
		warnings, named := groupWarnings(out)
		want := expectedWarnings(sub, op, n)
		ok := warnings == want && (op != "plan" || named == want)
		if !b.exactWarnings {
			// The gate's looser check: every group named by a command that owes warnings, none by one
			// that owes none. Terraform prints a warning that has a place in the configuration once
			// when apply's two plans both give it, which the planted quadratic warnings do.
			ok = want == 0 && warnings == 0 || want > 0 && named == n
		}
		if !ok {
			return fmt.Errorf("%s in %s printed %d group warnings naming %d groups, want %d: every group's decision must show", op, dir, warnings, named, want)
		}
		if record != nil {
			record(op, r)
		}
	}
	return nil
}

// expectedWarnings is how many group warnings a command must print. A plan of the warned subject
// warns once per group; apply prints that plan's warnings and those of the plan Terraform makes
// again as it applies; destroy prints the plan's "Will Stay On Server" and Delete's "Left On
// Server" for every group, whatever the streams hold.
func expectedWarnings(sub, op string, n int) int {
	switch {
	case sub == "floor" || op == "refresh":
		return 0
	case op == "destroy":
		return 2 * n
	case sub == "quiet":
		return 0
	case op == "apply":
		return 2 * n
	}
	return n
}

var groupWarning = regexp.MustCompile(`(?m)^Warning: Group "([^"]*)" of `)

// groupWarnings counts the group warnings in Terraform's terminal output, and the groups they name.
func groupWarnings(out []byte) (warnings, groups int) {
	names := map[string]bool{}
	for _, m := range groupWarning.FindAllSubmatch(out, -1) {
		names[string(m[1])] = true
	}
	return len(groupWarning.FindAllIndex(out, -1)), len(names)
}

// seedGroupStreams empties the server and makes k streams: empty ones (a group "keeper" made
// with MKSTREAM) or ones with entriesPerStream entries each.
func seedGroupStreams(ctx context.Context, rdb *redis.Client, k int, entries bool) error {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return err
	}
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range k {
			if !entries {
				p.XGroupCreateMkStream(ctx, groupStream(i), "keeper", "$")
				continue
			}
			for range entriesPerStream {
				p.XAdd(ctx, &redis.XAddArgs{Stream: groupStream(i), Values: []string{"f", "v"}})
			}
		}
		return nil
	})
	return err
}

func groupStream(i int) string { return fmt.Sprintf("bench:{s%d}:stream", i) }

// writeGroupConfig writes the configuration of ours or of the floor, in one shape, into dir: n
// groups over k streams, group g<i> on stream i mod k, every other group at "head". The provider
// block is empty: the harness passes VALKEY_URL (or the cluster's addresses), so that one
// directory can point at the server or at the proxy.
func writeGroupConfig(dir string, floor bool, shape string, n, k int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	provider := "valkey"
	if floor {
		provider = "valkeyfloor"
	}
	typ := provider + "_stream_group"
	start := func(i int) string { return []string{"head", "new"}[i%2] }
	var b, vars bytes.Buffer
	fmt.Fprintf(&b, "terraform {\n  required_providers {\n    %s = { source = \"echomq/%s\" }\n  }\n}\n\nprovider %q {}\n", provider, provider, provider)
	switch shape {
	case "blocks":
		for i := range n {
			fmt.Fprintf(&b, "\nresource %q \"g%d\" {\n  stream      = %q\n  name        = \"g%d\"\n  group_start = %q\n}\n", typ, i, groupStream(i%k), i, start(i))
		}
	case "for_each":
		fmt.Fprintf(&b, "\nvariable \"groups\" {\n  type = map(object({ stream = string, start = string }))\n}\n\n"+
			"resource %q \"g\" {\n  for_each    = var.groups\n  stream      = each.value.stream\n  name        = each.key\n  group_start = each.value.start\n}\n", typ)
		vars.WriteString("groups = {\n")
		for i := range n {
			fmt.Fprintf(&vars, "  g%d = { stream = %q, start = %q }\n", i, groupStream(i%k), start(i))
		}
		vars.WriteString("}\n")
		if err := os.WriteFile(filepath.Join(dir, "groups.auto.tfvars"), vars.Bytes(), 0o644); err != nil {
			return err
		}
	}
	_ = os.Remove(filepath.Join(dir, "terraform.tfstate"))
	_ = os.Remove(filepath.Join(dir, "terraform.tfstate.backup"))
	return os.WriteFile(filepath.Join(dir, "main.tf"), b.Bytes(), 0o644)
}

// The groups scenario's section of the report.

// target is the largest ratio allowed between the warned subject and each of the others.
const target = 1.3

var subjectLabels = map[string]string{
	"warned": "ours, every group warned", "quiet": "ours, no group warned", "floor": "plugin floor",
}

var opLabels = map[string]string{"plan": "plan", "apply": "apply", "refresh": "no-change plan", "destroy": "destroy"}

// ratio pairs the warned subject with other, repetition by repetition, by wall or CPU time.
func (r *groupResults) ratio(cell groupCell, op, other string, cpu bool) spread {
	of := opResult.wallSecs
	if cpu {
		of = opResult.cpuSecs
	}
	return paired(r.samples[groupKey{cell, "warned", op}], r.samples[groupKey{cell, other, op}], of)
}

func (r *groupResults) value(k groupKey, of func(opResult) float64) spread {
	return over(r.samples[k], of)
}

func (r *groupResults) cells() []groupCell {
	var cells []groupCell
	for _, cli := range r.clis {
		for _, shape := range r.shapes {
			for _, n := range r.sizes {
				cells = append(cells, groupCell{cli, shape, n})
			}
		}
	}
	return cells
}

func (r *groupResults) markdown(began time.Time, load string) string {
	var b strings.Builder
	b.WriteString(sectionHead("Groups: plan, apply, refresh and destroy, with a warning per group and without", began, load,
		strings.Join(r.clis, " and "), fmt.Sprintf("%d timed repetitions; `terraform -parallelism=10`", r.reps)))
	b.WriteString(groupsMethod)
	b.WriteString("### Targets\n\n")
	b.WriteString(r.targets())
	b.WriteString("\n### Time per command: median (min–max)\n\n")
	b.WriteString("Ratios are medians of the ratios of runs made side by side; `CPU` is user+sys of Terraform and the providers.\n\n")
	b.WriteString("| CLI | shape | N | command | ours, warned | ours, not warned | plugin floor | warned / not warned | warned / floor | warned / floor, CPU |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, cell := range r.cells() {
		for _, op := range groupOps {
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %.2fx |\n", strings.TrimPrefix(cell.cli, "Terraform "),
				cell.shape, cell.n, opLabels[op],
				secs(r.value(groupKey{cell, "warned", op}, opResult.wallSecs)), secs(r.value(groupKey{cell, "quiet", op}, opResult.wallSecs)),
				secs(r.value(groupKey{cell, "floor", op}, opResult.wallSecs)),
				times(r.ratio(cell, op, "quiet", false)), times(r.ratio(cell, op, "floor", false)), r.ratio(cell, op, "floor", true).med)
		}
	}
	b.WriteString(r.tripsTable())
	b.WriteString(r.rssTable())
	return b.String()
}

// targets checks the ratios of every cell and command, the round trips, and peak RSS.
func (r *groupResults) targets() string {
	var b strings.Builder
	checked, worst := 0, 0.0
	var missed []string
	for _, cell := range r.cells() {
		for _, op := range groupOps {
			for _, other := range []string{"quiet", "floor"} {
				m := r.ratio(cell, op, other, false).med
				checked++
				worst = max(worst, m)
				if m > target {
					missed = append(missed, fmt.Sprintf("%s, %s, N=%d, %s, against %s: %.2fx (CPU %.2fx)", cell.cli, cell.shape, cell.n,
						opLabels[op], subjectLabels[other], m, r.ratio(cell, op, other, true).med))
				}
			}
		}
	}
	fmt.Fprintf(&b, "- Every command of the warned subject within %.1fx of the same command with no group warned, and of the plugin floor "+
		"(wall, %d ratios: %d CLIs, 2 shapes, %d sizes, 4 commands, 2 comparisons): %s — %d of %d within, the largest %.2fx.\n",
		target, checked, len(r.clis), len(r.sizes), verdict(len(missed) == 0), checked-len(missed), checked, worst)
	for _, m := range missed {
		b.WriteString("  - over: " + m + "\n")
	}
	fmt.Fprintf(&b, "- Every group's decision in the terminal: **met** — every timed plan of the warned subject printed one warning naming each of its N groups, "+
		"and each apply and destroy the counts `expectedWarnings` says (a run that does not stops the bench).\n")
	for _, n := range r.sizes {
		cell := groupCell{r.clis[0], "blocks", n}
		tc, ok := r.trips[groupKey{cell, "warned", "apply"}]
		if !ok {
			continue
		}
		var creates, alone int64
		for sig, count := range tc.trips {
			creates += count * int64(strings.Count(sig, "XGROUP CREATE"))
			if sig == "XGROUP CREATE + XINFO GROUPS" {
				alone += count
			}
		}
		fmt.Fprintf(&b, "- Create costs one round trip, N=%d: %s — %d of %d Creates went out as one round trip with their `XINFO GROUPS` read-back; the apply took %d round trips (%.2f per group).\n",
			n, verdict(alone == int64(n) && creates == int64(n)), alone, n, tc.total(), float64(tc.total())/float64(n))
		by := medianCommands(countsOf(r.samples[groupKey{cell, "warned", "refresh"}]))
		fmt.Fprintf(&b, "- Refresh reads each stream once, N=%d (%d groups per stream): %s — %g `XINFO GROUPS` for %d streams.\n",
			n, 10, verdict(by["xinfo|groups"] == float64(n/10)), by["xinfo|groups"], n/10)
	}
	if len(r.sizes) >= 2 {
		lo, hi := r.sizes[len(r.sizes)-2], r.sizes[len(r.sizes)-1]
		var worst float64
		var peak float64
		for _, sub := range groupSubjects {
			for _, op := range groupOps {
				a := r.value(groupKey{groupCell{r.clis[0], "blocks", lo}, sub, op}, opResult.rssMiB).med
				c := r.value(groupKey{groupCell{r.clis[0], "blocks", hi}, sub, op}, opResult.rssMiB)
				if a > 0 {
					worst = max(worst, c.med/a)
				}
				peak = max(peak, c.hi)
			}
		}
		fmt.Fprintf(&b, "- Provider peak RSS flat in N (%s, blocks): at N=%d within 1.2x of N=%d for every subject and command: %s — at most %.2fx; "+
			"the largest peak at N=%d %.1f MiB (under 50 MB: %s).\n", r.clis[0], hi, lo, verdict(worst <= 1.2), worst, hi, peak, verdict(peak*1.048576 < 50))
	}
	return b.String()
}

func (r *groupResults) tripsTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Server work per command (ours, warned; %s, blocks)\n\n", r.clis[0])
	b.WriteString("Server commands: medians over the timed runs. Round trips: one more cycle through the counting proxy.\n\n")
	b.WriteString("| N | command | server commands | round trips | by what they carried | connections |\n|---|---|---|---|---|---|\n")
	for _, n := range r.sizes {
		for _, op := range groupOps {
			k := groupKey{groupCell{r.clis[0], "blocks", n}, "warned", op}
			by := medianCommands(countsOf(r.samples[k]))
			tc := r.trips[k]
			fmt.Fprintf(&b, "| %d | %s | %s | %d | %s | %d |\n", n, opLabels[op], breakdown(by), tc.total(), tc.describe(), tc.conns)
		}
	}
	return b.String()
}

func (r *groupResults) rssTable() string {
	var b strings.Builder
	b.WriteString("\n### Provider peak RSS, MiB: the largest provider process of the command, median (min–max), blocks\n\n")
	b.WriteString("| CLI | command | subject |")
	for _, n := range r.sizes {
		fmt.Fprintf(&b, " N=%d |", n)
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(r.sizes)) + "\n")
	for _, cli := range r.clis {
		for _, op := range groupOps {
			for _, sub := range groupSubjects {
				fmt.Fprintf(&b, "| %s | %s | %s |", strings.TrimPrefix(cli, "Terraform "), opLabels[op], subjectLabels[sub])
				for _, n := range r.sizes {
					fmt.Fprintf(&b, " %s |", mib(r.value(groupKey{groupCell{cli, "blocks", n}, sub, op}, opResult.rssMiB)))
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

var groupsMethod = `- N ` + "`valkey_stream_group`" + ` resources, group ` + "`g<i>`" + ` on stream ` + "`bench:{s<i mod N/10>}:stream`" + ` (ten groups per
  stream), every other one at ` + "`\"head\"`" + `, in two shapes: **blocks**, one resource block per group in one file, as
  ` + "`terraform query -generate-config-out`" + ` writes them; **for_each**, one block over a map read from a ` + "`.tfvars`" + ` file.
- Three subjects, side by side: **ours, every group warned**: the streams hold ` + fmt.Sprint(entriesPerStream) + ` entries each, so that the plan
  warns once per group (its replay or its skip); **ours, no group warned**: the streams exist and are empty; **plugin
  floor**: ` + "`bench/floor`" + `, a framework provider with our schemas that sends and says nothing. The server is emptied and
  seeded before each cycle of ours.
- A cycle is a plan of the creates, apply, a plan that must find no changes (with refresh), and destroy; every repetition
  runs one cycle of each subject for each shape and size, in an order that rotates. Destroy warns for every group with
  either of ours (the group stays on the server), so it is compared with the floor above all.
- Every command of ours must print the group warnings it owes (` + "`expectedWarnings`" + `), each naming its group: the plan one
  per group, the apply two (its plan's and the plan Terraform makes again as it applies), destroy two.
- Wall time is the command end to end; CPU is user+sys of Terraform and every process it waited for. Server commands:
  ` + "`CONFIG RESETSTAT`" + ` before and ` + "`INFO commandstats`" + ` after each command. Round trips: a loopback proxy counts each burst of
  client bytes that follows a reply (a pipeline written at once is one round trip). Peak RSS: ` + "`bench/cmd/rsswrap`" + `, named
  in ` + "`dev_overrides`" + ` for both providers, reports the kernel's maxrss of each provider process.

`
