package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// The perf gate (`make perfgate`, the perf step of `make ci`): the groups scenario cut down to
// what CI can run every time. Ours with a warning per group (the warned subject: every stream
// holds entries, so that each plan warns once per group and destroy twice) and the plugin floor,
// side by side, at N = 250 and 1,000 groups, in both shapes, on one CLI (the first of
// -terraform). A repetition runs one cycle (plan, apply, no-change plan, destroy) of each
// subject per cell, back to back, in an order that alternates, so that the machine's other work
// weighs on both; a command's ratio is ours / the floor's wall time, run by run.
//
// Noise: one repetition by default (-reps), and a cell with any command over is measured
// -gate-confirm (2) more times; the gate decides on the median of all the cell's paired ratios,
// so one disturbed run cannot fail it: noise has to win two runs of three, while what the gate
// is for (a warning per group in time N²: 2x to 40x at these sizes) is over in every run. A
// command fails when its CPU ratio is over (user+sys of Terraform and the providers: the work
// done, which other processes disturb least), or its wall ratio is over while the machine ran
// at a load average up to -gate-busy-load (twice the cores): on a machine overloaded by other
// work, wall time measures the scheduler (gateVerdict).
//
// Exit status: 0 within, 3 over (gateOver), 1 when the harness could not measure.
//
// -gate-plant PATCH checks the gate itself: ours is built from a copy of the provider with PATCH
// applied (the working tree stays as it is), in one cell (250 groups in blocks, one run, no
// warm-up), and the exit status is 0 only when the gate fails it.

var (
	gateMode    bool
	gateSizes   = flag.String("gate-sizes", "250,1000", "the perf gate's N")
	gateShapes  = flag.String("gate-shapes", strings.Join(groupShapes, ","), "the perf gate's shapes (blocks, for_each)")
	gateMax     = flag.Float64("gate-max", 1.3, "the perf gate's largest ratio of ours to the floor, for any command")
	gateConfirm = flag.Int("gate-confirm", 2, "more paired cycles of a cell with a command over -gate-max; the cell fails on the median of all its runs")
	gateBusy    = flag.Float64("gate-busy-load", float64(2*runtime.NumCPU()),
		"above this 1-minute load average a wall ratio over -gate-max fails only with the CPU ratio (default: twice the cores)")
	gateWarmUp = flag.Bool("gate-warm-up", true, "an untimed cycle of each subject before the timed ones")
	gateOut    = flag.String("gate-out", "../build", "where the perf gate writes perfgate.md and perfgate.json")
	gatePlant  = flag.String("gate-plant", "", "a patch that must fail the gate (make perfgate/planted): writes perfgate-planted.md and .json")
)

// gateOver is the exit status of a gate that measured a command over -gate-max.
const gateOver = 3

var gateSubjects = []string{"warned", "floor"}

// runGate measures, writes the gate's figures, prints its table, and returns the exit status.
func runGate(b *bench) int {
	began, load := time.Now(), loadAvg()
	b.exactWarnings = false
	if !isFlagSet("reps") {
		b.reps = 1
	}
	if !isFlagSet("out") {
		b.out = "out/perfgate" // apart from make bench's binaries and state
	}
	name := "perfgate"
	if *gatePlant != "" {
		dir, err := plantedCopy(*gatePlant)
		if err != nil {
			fatalf("gate: %v", err)
		}
		defer os.RemoveAll(dir)
		providerRoot, b.out, b.reps, name = dir, filepath.Join(dir, "bench-out"), 1, "perfgate-planted"
		*gateSizes, *gateShapes, *gateConfirm, *gateWarmUp = "250", "blocks", 0, false
	}
	if b.reps < 1 || *gateConfirm < 0 {
		fatalf("-reps must be 1 or more, -gate-confirm 0 or more")
	}
	bin := firstCLI()
	if err := checkCLI(bin); err != nil {
		fatalf("gate: %v", err)
	}
	shapes := strings.Split(*gateShapes, ",")
	for _, s := range shapes {
		if s != "blocks" && s != "for_each" {
			fatalf("-gate-shapes: %q is not a shape (blocks, for_each)", s)
		}
	}
	ctx, stop := b.start()
	defer stop()
	res, err := b.measureGroups(ctx, groupRun{sizes: parseSizes("gate-sizes", *gateSizes), clis: []string{bin}, shapes: shapes,
		subjects: gateSubjects, noWarmUp: !*gateWarmUp})
	if err != nil {
		logf("gate: %v", err)
		return 1
	}
	confirmed := map[groupCell]int{}
	for i, cell := range res.cells() {
		if len(res.over(cell)) == 0 {
			continue
		}
		for k := range *gateConfirm {
			if err := b.groupReps(ctx, res.tfs[0], res, cell, b.reps+k, i, fmt.Sprintf("confirm %d/%d", k+1, *gateConfirm)); err != nil {
				logf("gate: %v", err)
				return 1
			}
			confirmed[cell]++
		}
	}
	table, over := res.gateTable(confirmed)
	fmt.Print(table)
	text := sectionHead("Perf gate: ours with a warning per group against the plugin floor", began, load,
		res.clis[0], fmt.Sprintf("%d paired repetitions, %d more for a cell over %.2fx; `terraform -parallelism=%d`; built from %s",
			b.reps, *gateConfirm, *gateMax, b.parallelism, providerRoot)) + table
	if err := res.writeGate(*gateOut, name, text); err != nil {
		logf("gate: %v", err)
		return 1
	}
	if *gatePlant != "" {
		if over == 0 {
			logf("gate: FAILED: ours with %s applied passed the gate, which must fail it", *gatePlant)
			return 1
		}
		logf("gate: ours with %s applied fails the gate, as it must (%s)", *gatePlant, filepath.Join(*gateOut, name+".md"))
		return 0
	}
	if over > 0 {
		logf("gate: FAILED: %d commands over %.2fx the plugin floor (%s)", over, *gateMax, filepath.Join(*gateOut, "perfgate.md"))
		return gateOver
	}
	logf("gate: every command within %.2fx of the plugin floor (%s)", *gateMax, time.Since(began).Round(time.Second))
	return 0
}

// over lists the commands of cell that fail the gate (gateVerdict).
func (r *groupResults) over(cell groupCell) []string {
	var ops []string
	for _, op := range groupOps {
		if over, _ := r.gateVerdict(cell, op); over {
			ops = append(ops, op)
		}
	}
	return ops
}

// gateVerdict decides one command of a cell. It fails when ours did more than -gate-max the
// floor's work (CPU: user+sys of Terraform and the providers, which the machine's other work
// disturbs least), or took more than -gate-max its wall time while the machine was not
// overloaded (the cell's peak 1-minute load average at most -gate-busy-load). On an overloaded
// machine a wall ratio over with the CPU ratio within is the scheduler's, not ours: it is shown,
// not counted.
func (r *groupResults) gateVerdict(cell groupCell, op string) (over bool, verdict string) {
	wall, cpu := r.ratio(cell, op, "floor", false).med, r.ratio(cell, op, "floor", true).med
	switch {
	case cpu > *gateMax:
		return true, "**OVER** (CPU)"
	case wall > *gateMax && r.peakLoad[cell] <= *gateBusy:
		return true, "**OVER** (wall)"
	case wall > *gateMax:
		return false, fmt.Sprintf("ok: wall over but CPU within, at load %.1f (over %.1f: not counted)", r.peakLoad[cell], *gateBusy)
	}
	return false, "ok"
}

// gateTable is the gate's table, and how many commands are over.
func (r *groupResults) gateTable(confirmed map[groupCell]int) (string, int) {
	var b strings.Builder
	over := 0
	fmt.Fprintf(&b, "Median (min–max); ours / floor is the median of the ratios of runs made back to back; a command fails over %.2fx in CPU, "+
		"or in wall time at a load average up to %.1f. Load: the cell's peak 1-minute load average.\n\n", *gateMax, *gateBusy)
	b.WriteString("| shape | N | command | runs | load | ours, warned | plugin floor | ours / floor, wall | ours / floor, CPU | verdict |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, cell := range r.cells() {
		for _, op := range groupOps {
			o, v := r.gateVerdict(cell, op)
			if o {
				over++
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %d | %.1f | %s | %s | %s | %s | %s |\n", cell.shape, cell.n, opLabels[op],
				len(r.samples[groupKey{cell, "warned", op}]), r.peakLoad[cell],
				secs(r.value(groupKey{cell, "warned", op}, opResult.wallSecs)), secs(r.value(groupKey{cell, "floor", op}, opResult.wallSecs)),
				times(r.ratio(cell, op, "floor", false)), times(r.ratio(cell, op, "floor", true)), v)
		}
		if n := confirmed[cell]; n > 0 {
			fmt.Fprintf(&b, "| %s | %d | | | | %d more runs of this cell: it was over after the first %d | | | | |\n", cell.shape, cell.n, n, r.reps)
		}
	}
	return b.String() + "\n", over
}

// writeGate writes NAME.md (text) and NAME.json (every timed run) into dir: perfgate, or
// perfgate-planted for -gate-plant.
func (r *groupResults) writeGate(dir, name, text string) error {
	type run struct {
		Wall, CPU float64 // seconds
	}
	type row struct {
		CLI, Shape, Subject, Command string
		N                            int
		Runs                         []run
		PeakLoad                     float64
		WallToFloor, CPUToFloor      float64 `json:",omitempty"` // medians of the paired ratios (ours)
	}
	var rows []row
	for _, cell := range r.cells() {
		for _, sub := range r.subjects {
			for _, op := range groupOps {
				rw := row{CLI: cell.cli, Shape: cell.shape, Subject: sub, Command: op, N: cell.n, PeakLoad: r.peakLoad[cell]}
				for _, s := range r.samples[groupKey{cell, sub, op}] {
					rw.Runs = append(rw.Runs, run{s.wallSecs(), s.cpuSecs()})
				}
				if sub == "warned" {
					rw.WallToFloor, rw.CPUToFloor = r.ratio(cell, op, "floor", false).med, r.ratio(cell, op, "floor", true).med
				}
				rows = append(rows, rw)
			}
		}
	}
	js, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".md"), []byte(text), 0o644)
}

// plantedCopy copies the provider's files (tracked, and untracked but not ignored, as they are
// in the working tree) into a new temporary folder and applies patch there.
func plantedCopy(patch string) (string, error) {
	patch, err := filepath.Abs(patch)
	if err != nil {
		return "", err
	}
	list, err := exec.Command("git", "-C", providerRoot, "ls-files", "-z", "-co", "--exclude-standard").Output()
	if err != nil {
		return "", fmt.Errorf("listing the provider's files: %w", err)
	}
	dir, err := os.MkdirTemp("", "valkey-perfgate-planted-")
	if err != nil {
		return "", err
	}
	for _, f := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(providerRoot, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err == nil {
			err = os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, f), data, 0o644)
		}
		if err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	apply := exec.Command("git", "apply", patch)
	apply.Dir = dir
	if out, err := apply.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("git apply %s: %w: %s", patch, err, out)
	}
	return dir, nil
}
