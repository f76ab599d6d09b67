package systemtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
)

// TestChaos is the randomized fault campaign: for each seed, a sequence of steps (chaos_gen_test.go)
// run through the real CLI against servers behind fault-injecting proxies, with the invariants
// (chaos_check_test.go) checked after every step against the campaign's model of the server
// (chaos_model_test.go), and at the end a fault-free apply that must converge. A failing seed
// is shrunk to the shortest sequence that still fails, and the command that replays it is
// printed. It runs only when asked (make chaos, or the full run's chaos step):
//
//	CHAOS_SEEDS   seeds to run: "7", "1,5,9" or "1-20" (required)
//	CHAOS_STEPS   steps per seed (default 40)
//	CHAOS_MODES   standalone, cluster, or both comma-separated (default standalone)
//	CHAOS_ONLY    the step numbers to keep, comma-separated (a shrunk sequence); default all
//	CHAOS_SHRINK  0 to report a failure without shrinking it
//	CHAOS_REPORT  a file to append one JSON line per seed to (steps, faults, checks)
//	CHAOS_PLANT   a planted bug to run against instead of the provider as it is (chaos_plant_test.go)
//	CHAOS_CAMPAIGN a Markdown file to write the campaign's report to (chaos_report_test.go)
//	CHAOS_REPEAT  runs each seed that many times, and fails unless every run ends alike: passing,
//	              or failing at the same step with the same invariant (the proof of exact replay)
func TestChaos(t *testing.T) {
	needCLI(t)
	cfg := chaosConfigFromEnv(t)
	pluginDir := cfg.pluginDir(t)
	campaign := &chaosCampaign{started: time.Now(), commit: gitCommit()}
	if path := os.Getenv("CHAOS_CAMPAIGN"); path != "" {
		defer func() { writeCampaign(t, path, cfg, campaign) }()
	}
	for _, mode := range cfg.modes {
		for _, seed := range cfg.seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", mode, seed), func(t *testing.T) {
				needChaosServers(t, mode)
				steps := cfg.keep(chaosSteps(mode, seed, cfg.steps))
				stats := newChaosStats(mode, seed)
				campaign.seeds = append(campaign.seeds, stats)
				failure := runChaos(t, mode, steps, pluginDir, stats)
				for run := 2; run <= cfg.repeat; run++ {
					again := runChaos(t, mode, steps, pluginDir, stats.shrinking())
					t.Logf("run %d of %d: %s", run, cfg.repeat, outcomeOf(again))
					if outcomeOf(again) != outcomeOf(failure) {
						t.Errorf("replay is not exact: run 1 %s, run %d %s", outcomeOf(failure), run, outcomeOf(again))
					}
				}
				defer func() {
					stats.write(t, cfg.report, failure)
					if failure != nil {
						campaign.failed = append(campaign.failed, fmt.Sprintf("%s seed %d %s", mode, seed, failure.where()))
					}
				}()
				if failure == nil {
					t.Logf("%s", stats)
					return
				}
				t.Logf("%s", stats)
				t.Errorf("%s", failure)
				if cfg.shrink {
					shrunk, last := shrinkChaos(t, mode, steps, failure, pluginDir, stats)
					failure = last
					t.Errorf("shrunk to %d of %d steps, failing %s:\n%s\nreplay: %s", len(shrunk), len(steps), last.where(),
						describeSteps(shrunk), cfg.replay(mode, seed, shrunk))
				} else {
					t.Errorf("replay: %s", cfg.replay(mode, seed, steps))
				}
			})
		}
	}
}

type chaosConfig struct {
	seeds  []int64
	steps  int
	modes  []chaosMode
	only   []int
	shrink bool
	report string
	plant  string // CHAOS_PLANT
	repeat int    // CHAOS_REPEAT
}

func chaosConfigFromEnv(t *testing.T) *chaosConfig {
	t.Helper()
	seeds := os.Getenv("CHAOS_SEEDS")
	if seeds == "" {
		t.Skip("set CHAOS_SEEDS to run the fault campaign (make chaos SEED=... STEPS=...)")
	}
	cfg := &chaosConfig{steps: 40, modes: []chaosMode{chaosStandalone}, shrink: os.Getenv("CHAOS_SHRINK") != "0",
		report: os.Getenv("CHAOS_REPORT"), plant: os.Getenv("CHAOS_PLANT")}
	cfg.seeds = chaosSeedList(t, seeds)
	if v := os.Getenv("CHAOS_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("CHAOS_STEPS=%q is not a number of steps", v)
		}
		cfg.steps = n
	}
	if v := os.Getenv("CHAOS_REPEAT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_REPEAT=%q is not a number of runs", v)
		}
		cfg.repeat = n
	}
	if v := os.Getenv("CHAOS_MODES"); v != "" {
		cfg.modes = nil
		for _, m := range strings.Split(v, ",") {
			if m := chaosMode(strings.TrimSpace(m)); m == chaosStandalone || m == chaosCluster || m == chaosReplicated {
				cfg.modes = append(cfg.modes, m)
			} else {
				t.Fatalf("CHAOS_MODES=%q: %q is not standalone, cluster or replicated", v, m)
			}
		}
	}
	if v := os.Getenv("CHAOS_ONLY"); v != "" {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("CHAOS_ONLY=%q: %q is not a step number", v, f)
			}
			cfg.only = append(cfg.only, n)
		}
		cfg.steps = max(cfg.steps, slices.Max(cfg.only))
	}
	return cfg
}

// chaosSeedList reads "7", "1,5,9" or "1-20".
func chaosSeedList(t *testing.T, seeds string) []int64 {
	t.Helper()
	var out []int64
	for _, part := range strings.Split(seeds, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		first, err := strconv.ParseInt(lo, 10, 64)
		last := first
		if err == nil && isRange {
			last, err = strconv.ParseInt(hi, 10, 64)
		}
		if err != nil || last < first {
			t.Fatalf("seeds %q: %q is not a seed or a range of seeds", seeds, part)
		}
		for s := first; s <= last; s++ {
			out = append(out, s)
		}
	}
	return out
}

// keep is the steps CHAOS_ONLY names, or all.
func (cfg *chaosConfig) keep(steps []chaosStep) []chaosStep {
	if cfg.only == nil {
		return steps
	}
	return slices.DeleteFunc(steps, func(s chaosStep) bool { return !slices.Contains(cfg.only, s.N) })
}

// pluginDir is where the provider under test is: the harness's build, or the plant's.
func (cfg *chaosConfig) pluginDir(t *testing.T) string {
	t.Helper()
	if cfg.plant == "" {
		newCLIRun(t, "") // builds the provider once for the package
		return cliPluginDir
	}
	plant, ok := findPlant(cfg.plant)
	if !ok {
		t.Fatalf("CHAOS_PLANT=%q names no planted bug (chaos_plant_test.go)", cfg.plant)
	}
	dir := t.TempDir()
	acctest.MustDo(t, plant.build(dir))
	return dir
}

// replay is the one command that runs steps of seed again.
func (cfg *chaosConfig) replay(mode chaosMode, seed int64, steps []chaosStep) string {
	numbers := make([]string, len(steps))
	last := 0
	for i, s := range steps {
		numbers[i], last = strconv.Itoa(s.N), s.N
	}
	cmd := fmt.Sprintf("make chaos MODE=%s SEED=%d STEPS=%d", mode, seed, last)
	if len(steps) < last {
		cmd += " ONLY=" + strings.Join(numbers, ",")
	}
	if cfg.plant != "" {
		cmd = "CHAOS_PLANT=" + cfg.plant + " " + cmd
	}
	return cmd
}

func describeSteps(steps []chaosStep) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString("  " + s.String() + "\n")
	}
	return b.String()
}

// chaosFailure is the first invariant a campaign broke.
type chaosFailure struct {
	Step      int // 0: the final convergence
	Invariant string
	Problems  []string
	Context   string // the step and what the CLI printed
}

func (f *chaosFailure) where() string {
	if f.Step == 0 {
		return "in the final convergence: " + f.Invariant
	}
	return fmt.Sprintf("at step %d: %s", f.Step, f.Invariant)
}

// outcomeOf is how a run ended, for comparing replays: "passed", or where it failed.
func outcomeOf(f *chaosFailure) string {
	if f == nil {
		return "passed"
	}
	return "failed " + f.where()
}

func (f *chaosFailure) Error() string {
	return fmt.Sprintf("invariant broken %s:\n  %s\n%s", f.where(), strings.Join(f.Problems, "\n  "), f.Context)
}

// shrinkChaos cuts steps down to a shortest sequence that still breaks the same invariant at
// the same kind of step (delta debugging: drop chunks, halving them when none can go), within
// a budget of runs, and runs the result once more: what it prints has failed twice so.
func shrinkChaos(t *testing.T, mode chaosMode, steps []chaosStep, failure *chaosFailure, pluginDir string, stats *chaosStats) ([]chaosStep, *chaosFailure) {
	t.Helper()
	const budget, timeBudget = 60, 15 * time.Minute
	started := time.Now()
	seq := upTo(steps, failure.Step)
	kind := failure.kind(steps)
	runs := 0
	try := func(candidate []chaosStep) bool {
		runs++
		f := runChaos(t, mode, candidate, pluginDir, stats.shrinking())
		if !f.same(failure.Invariant, kind, candidate) {
			return false
		}
		seq, failure = upTo(candidate, f.Step), f
		return true
	}
	for n := 2; len(seq) > 0 && runs < budget && time.Since(started) < timeBudget; {
		if len(seq) == 1 {
			try(nil)
			break
		}
		n = min(n, len(seq))
		chunk := (len(seq) + n - 1) / n
		reduced := false
		for i := 0; i < len(seq) && runs < budget; i += chunk {
			candidate := slices.Concat(seq[:i], seq[min(i+chunk, len(seq)):])
			if try(candidate) {
				n, reduced = max(n-1, 2), true
				break
			}
		}
		if !reduced {
			if n >= len(seq) {
				break
			}
			n *= 2
		}
	}
	t.Logf("shrinking took %d runs and %v", runs, time.Since(started).Round(time.Second))
	if again := runChaos(t, mode, seq, pluginDir, stats.shrinking()); !again.same(failure.Invariant, kind, seq) {
		t.Errorf("the shrunk sequence did not fail the same way when run again: %v", again)
	}
	return seq, failure
}

// kind is the kind of step f failed at (stepConverge for the final convergence).
func (f *chaosFailure) kind(steps []chaosStep) stepKind {
	for _, s := range steps {
		if s.N == f.Step {
			return s.Kind
		}
	}
	return stepConverge
}

// same tells whether f (nil: no failure) broke invariant at a step of kind, in steps.
func (f *chaosFailure) same(invariant string, kind stepKind, steps []chaosStep) bool {
	return f != nil && f.Invariant == invariant && f.kind(steps) == kind
}

// upTo is steps up to and including the step numbered n (all of them for 0, the convergence).
func upTo(steps []chaosStep, n int) []chaosStep {
	if n == 0 {
		return steps
	}
	for i, s := range steps {
		if s.N == n {
			return steps[:i+1]
		}
	}
	return steps
}

// chaosStats counts what a seed's campaign did.
type chaosStats struct {
	Mode   chaosMode      `json:"mode"`
	Seed   int64          `json:"seed"`
	Steps  int            `json:"steps"`
	Kinds  map[string]int `json:"kinds"`
	Faults map[string]int `json:"faults_injected"`
	Acted  map[string]int `json:"faults_acted"`
	Checks map[string]int `json:"checks"`
	// Slots counts a Cluster campaign's reshard steps, its moves by kind, and the redirects
	// (-MOVED, -ASK) the provider's commands were answered.
	Slots map[string]int `json:"slots,omitempty"`
	// During counts the steps' events (chaos_during_test.go) by kind; DuringStruck, by kind and
	// the command the proxies held while each ran.
	During       map[string]int `json:"during_drawn"`
	DuringStruck map[string]int `json:"during_struck"`
	// Met counts what a normal run must meet (chaosRun.met): plans with several absent
	// streams, imports of groups the server holds, IDs holding "/", retries that succeed.
	Met         map[string]int `json:"met"`
	ShrinkSteps int            `json:"shrink_steps,omitempty"`
	Seconds     float64        `json:"seconds"`
	StepSeconds map[string]float64
	Failed      string `json:"failed,omitempty"`
	started     time.Time
	parent      *chaosStats // a shrinking run counts its steps there
}

func newChaosStats(mode chaosMode, seed int64) *chaosStats {
	return &chaosStats{Mode: mode, Seed: seed, Kinds: map[string]int{}, Faults: map[string]int{}, Acted: map[string]int{},
		Checks: map[string]int{}, Slots: map[string]int{}, During: map[string]int{}, DuringStruck: map[string]int{}, Met: map[string]int{}, StepSeconds: map[string]float64{}, started: time.Now()}
}

// shrinking is the stats of one shrinking run, which count only as shrink steps of s.
func (s *chaosStats) shrinking() *chaosStats {
	c := newChaosStats(s.Mode, s.Seed)
	c.parent = s
	return c
}

func (s *chaosStats) step(kind stepKind, took time.Duration) {
	if s.parent != nil {
		s.parent.ShrinkSteps++
		return
	}
	s.Steps++
	s.Kinds[kind.String()]++
	s.StepSeconds[kind.String()] += took.Seconds()
}

func (s *chaosStats) String() string {
	b, _ := json.Marshal(s)
	return fmt.Sprintf("%s seed %d: %d steps in %.0fs: %s", s.Mode, s.Seed, s.Steps, time.Since(s.started).Seconds(), b)
}

// write appends the seed's line to CHAOS_REPORT.
func (s *chaosStats) write(t *testing.T, report string, failure *chaosFailure) {
	s.Seconds = time.Since(s.started).Seconds()
	if failure != nil {
		s.Failed = failure.where()
	}
	if report == "" {
		return
	}
	b, err := json.Marshal(s)
	acctest.MustDo(t, err)
	f, err := os.OpenFile(report, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	acctest.MustDo(t, err)
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	acctest.MustDo(t, err)
}

// chaosRun is one campaign: a target, a working directory, the declared groups and the model.
type chaosRun struct {
	t          *testing.T
	tg         *chaosTarget
	cli        *cliRun
	model      *chaosModel
	declared   []chaosResource
	nextAddr   int
	saved      bool // a saved plan that no state write or configuration edit has made stale
	identity   bool // import blocks may name the group by identity (Terraform 1.12 and later)
	stats      *chaosStats
	lastImport chaosResource // what the last import step chose
	last       cliResult     // the last CLI step's result
}

// runChaos runs steps and the final convergence on fresh servers, and returns the first broken
// invariant, or nil.
func runChaos(t *testing.T, mode chaosMode, steps []chaosStep, pluginDir string, stats *chaosStats) *chaosFailure {
	t.Helper()
	tg, err := startChaosTarget(mode)
	if err != nil {
		t.Fatalf("starting the %s target: %v", mode, err)
	}
	defer tg.close()
	run := &chaosRun{t: t, tg: tg, cli: newCLIRunWith(t, "", pluginDir), model: newChaosModel(), stats: stats,
		identity: cliVersion(t).GreaterThanOrEqual(version.Must(version.NewVersion("1.12.0")))}
	// No WAIT, whatever a mode's default (an environment variable, which the schema lets every
	// mode take): the servers have no replicas, but in replicated mode, whose provider block
	// asks for min_replica_acks = 1.
	run.cli.env["VALKEY_MIN_REPLICA_ACKS"] = "0"
	for _, s := range steps {
		start := time.Now()
		f := run.step(s)
		stats.step(s.Kind, time.Since(start))
		if f != nil {
			return f
		}
	}
	return run.converge()
}

// chaosStepBudget bounds one step: its command, and the campaign's reads and changes around it.
// Faults can make a command legitimately slow: at -parallelism=1 with max_retries = 3, every
// create of an apply whose CLUSTER SLOTS never answers in time spends about 15 s on its slot
// map (3 nodes, 4 tries of command_timeout each), so a dozen of them outlast 3 minutes (Cluster
// seed 5, step 49, did). A command still running after it has hung, and the step fails so.
const chaosStepBudget = 10 * time.Minute

// step runs one step and checks the invariants after it.
func (run *chaosRun) step(s chaosStep) *chaosFailure {
	rng := rand.New(rand.NewPCG(s.Pick, uint64(s.N))) //nolint:gosec // a reproducible test sequence
	ctx, cancel := context.WithTimeout(run.t.Context(), chaosStepBudget)
	defer cancel()
	switch s.Kind {
	case stepOutOfBand:
		did, err := run.model.outOfBand(ctx, run.tg, rng.IntN, run.declared, s.N)
		if err != nil {
			return &chaosFailure{Step: s.N, Invariant: "the server answers the campaign's own change as the model expects", Problems: []string{err.Error()}, Context: s.String()}
		}
		run.t.Logf("%s: %s", s, did)
		return run.checkServer(ctx, s, s.String()+": "+did)
	case stepRestart:
		how, err := run.tg.restart(rng, "")
		if err != nil {
			run.t.Fatalf("%s: %s: %v", s, how, err)
		}
		run.t.Logf("%s: %s", s, how)
		return run.checkServer(ctx, s, s.String()+": "+how)
	}
	return run.cliStep(ctx, s, rng)
}

// checkServer compares the server with the model after a step that sent nothing through the
// proxies.
func (run *chaosRun) checkServer(ctx context.Context, s chaosStep, context string) *chaosFailure {
	snap, err := readChaosServer(ctx, run.tg)
	if err != nil {
		run.t.Fatalf("%s: reading the server: %v", s, err)
	}
	run.stats.Checks[invariantServer]++
	if diff := snap.diff(run.model); len(diff) > 0 {
		return &chaosFailure{Step: s.N, Invariant: invariantServer, Problems: diff, Context: context}
	}
	return nil
}
