package systemtest

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
)

// The campaign's report: CHAOS_CAMPAIGN names a Markdown file that TestChaos writes when it
// ends (make chaos writes build/CAMPAIGN.md, which git ignores): the commit, the
// CLI and the server, the seeds and the command that runs them again, the steps by kind, the
// faults by kind, the checks by invariant, and how long it took. TestChaosPlanted appends which
// seed and invariant caught each planted bug.

// chaosCampaign collects the seeds' stats of one TestChaos run.
type chaosCampaign struct {
	started time.Time
	commit  string // what ran: HEAD when the campaign started
	seeds   []*chaosStats
	failed  []string
}

// writeCampaign writes the report of cfg's run to path.
func writeCampaign(t *testing.T, path string, cfg *chaosConfig, c *chaosCampaign) {
	t.Helper()
	var b strings.Builder
	total := newChaosStats("", 0)
	for _, s := range c.seeds {
		total.Steps += s.Steps
		total.ShrinkSteps += s.ShrinkSteps
		for _, m := range []struct{ into, from map[string]int }{{total.Kinds, s.Kinds}, {total.Faults, s.Faults}, {total.Acted, s.Acted}, {total.Checks, s.Checks},
			{total.Slots, s.Slots}, {total.During, s.During}, {total.DuringStruck, s.DuringStruck}, {total.Met, s.Met}} {
			for k, v := range m.from {
				m.into[k] += v
			}
		}
		for k, v := range s.StepSeconds {
			total.StepSeconds[k] += v
		}
	}
	sum := func(m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	modes := make([]string, len(cfg.modes))
	for i, m := range cfg.modes {
		modes[i] = string(m)
	}
	result := fmt.Sprintf("passed: every invariant held in all %d seeds", len(c.seeds))
	if len(c.failed) > 0 {
		result = fmt.Sprintf("FAILED: %d of %d seeds broke an invariant (%s)", len(c.failed), len(c.seeds), strings.Join(c.failed, "; "))
	}
	fmt.Fprintf(&b, "# Fault campaign report\n\n")
	fmt.Fprintf(&b, "Written by `make chaos` (`TestChaos`, `internal/systemtest/chaos_*_test.go`). The same commit, seeds, steps and\n"+
		"modes run the same steps with the same faults: each fault picks its command by what it is (its key, and its group for\n"+
		"`XGROUP CREATE`), never by the order commands arrive in. Each seed's line is one `CHAOS_REPORT` JSON line.\n\n")
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| commit | %s |\n", c.commit)
	fmt.Fprintf(&b, "| command | `%s` |\n", cfg.command())
	fmt.Fprintf(&b, "| CLI | %s |\n", strings.TrimSpace(firstLine(commandOutput(os.Getenv("TF_ACC_TERRAFORM_PATH"), "version"))))
	fmt.Fprintf(&b, "| server | %s |\n", serverVersion())
	fmt.Fprintf(&b, "| modes | %s |\n", strings.Join(modes, ", "))
	fmt.Fprintf(&b, "| seeds | %s (%d per mode) |\n", seedRanges(cfg.seeds), len(cfg.seeds))
	fmt.Fprintf(&b, "| steps | %d (%d per seed), and one fault-free convergence per seed; %d more while shrinking or repeating |\n", total.Steps, cfg.steps, total.ShrinkSteps)
	fmt.Fprintf(&b, "| faults | %d drawn, %d acted on a command or a connection |\n", sum(total.Faults), sum(total.Acted))
	fmt.Fprintf(&b, "| checks | %d |\n", sum(total.Checks))
	fmt.Fprintf(&b, "| started | %s |\n", c.started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "| took | %v |\n", time.Since(c.started).Round(time.Second))
	fmt.Fprintf(&b, "| result | %s |\n\n", result)

	fmt.Fprintf(&b, "## Seeds\n\n| mode | seed | steps | faults drawn | faults acted | checks | seconds | result |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range c.seeds {
		res := "passed"
		if s.Failed != "" {
			res = "failed " + s.Failed
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %.0f | %s |\n", s.Mode, s.Seed, s.Steps, sum(s.Faults), sum(s.Acted), sum(s.Checks), s.Seconds, res)
	}
	fmt.Fprintf(&b, "\n## Steps by kind\n\n| kind | steps | seconds |\n|---|---:|---:|\n")
	for _, k := range slices.Sorted(maps.Keys(total.Kinds)) {
		fmt.Fprintf(&b, "| %s | %d | %.0f |\n", k, total.Kinds[k], total.StepSeconds[k])
	}
	fmt.Fprintf(&b, "\n## Faults by kind\n\nDrawn: put on a step. Acted: the commands (for Refuse, the connections) a fault acted on.\n\n"+
		"| fault | drawn | acted |\n|---|---:|---:|\n")
	for _, k := range slices.Sorted(maps.Keys(total.Faults)) {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", k, total.Faults[k], total.Acted[k])
	}
	if len(total.Slots) > 0 {
		fmt.Fprintf(&b, "\n## Slots moved (Cluster mode)\n\nReshard steps, the moves they made, and the redirects the proxies delivered to the provider's commands.\n\n"+
			"| what | count |\n|---|---:|\n")
		for _, k := range slices.Sorted(maps.Keys(total.Slots)) {
			fmt.Fprintf(&b, "| %s | %d |\n", k, total.Slots[k])
		}
	}
	fmt.Fprintf(&b, "\n## Events during a step\n\nDrawn: put on a step. Struck: the commands the proxies held while an event ran (none when\n"+
		"the step never sent the command it names).\n\n| event | drawn |\n|---|---:|\n")
	for _, k := range slices.Sorted(maps.Keys(total.During)) {
		fmt.Fprintf(&b, "| %s | %d |\n", k, total.During[k])
	}
	fmt.Fprintf(&b, "\n| event: command struck | struck |\n|---|---:|\n")
	for _, k := range slices.Sorted(maps.Keys(total.DuringStruck)) {
		fmt.Fprintf(&b, "| %s | %d |\n", k, total.DuringStruck[k])
	}
	fmt.Fprintf(&b, "\n## What the steps met\n\nThe situations a normal run must meet, each counted in the steps that met it.\n\n| situation | steps |\n|---|---:|\n")
	for _, k := range slices.Sorted(maps.Keys(total.Met)) {
		fmt.Fprintf(&b, "| %s | %d |\n", k, total.Met[k])
	}
	fmt.Fprintf(&b, "\n## Checks by invariant\n\n| invariant | checks |\n|---|---:|\n")
	for _, k := range slices.Sorted(maps.Keys(total.Checks)) {
		fmt.Fprintf(&b, "| %s | %d |\n", k, total.Checks[k])
	}
	acctest.MustDo(t, os.WriteFile(path, []byte(b.String()), 0o644))
	t.Logf("wrote the campaign's report to %s", path)
}

// appendPlantsToCampaign adds TestChaosPlanted's findings to the report at path.
func appendPlantsToCampaign(t *testing.T, path string, lines []string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	acctest.MustDo(t, err)
	defer f.Close()
	_, err = fmt.Fprintf(f, "\n## Planted bugs\n\nEach plant is a one-line mutation of the provider's source (`chaos_plant_test.go`); the campaign must catch it\n"+
		"with an invariant that guards it. Replayed: the runs of the steps up to the failing one that failed there again, with the same\n"+
		"invariant.\n\n| plant | mode | caught by | seed | at | runs to catch | replayed alike |\n|---|---|---|---:|---|---:|---:|\n%s",
		strings.Join(lines, ""))
	acctest.MustDo(t, err)
}

// command is the make command that runs cfg's campaign again.
func (cfg *chaosConfig) command() string {
	modes := make([]string, len(cfg.modes))
	for i, m := range cfg.modes {
		modes[i] = string(m)
	}
	cmd := fmt.Sprintf("make chaos MODE=%s SEED=%s STEPS=%d", strings.Join(modes, ","), seedRanges(cfg.seeds), cfg.steps)
	if cli := os.Getenv("FAULT_MATRIX_CLI"); cli != "" { // make chaos's CLI
		cmd += " FAULT_MATRIX_CLI=" + cli
	}
	if cfg.plant != "" {
		cmd = "CHAOS_PLANT=" + cfg.plant + " " + cmd
	}
	return cmd
}

// seedRanges writes seeds as chaosSeedList reads them: "1-3,7".
func seedRanges(seeds []int64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", seeds[i], seeds[j]))
		} else {
			parts = append(parts, fmt.Sprint(seeds[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func gitCommit() string {
	commit := strings.TrimSpace(commandOutput("git", "rev-parse", "HEAD"))
	if commit == "" {
		return "unknown (no git checkout)"
	}
	if strings.TrimSpace(commandOutput("git", "status", "--porcelain", "--untracked-files=no")) != "" {
		commit += " with uncommitted changes"
	}
	return "`" + commit + "`"
}

func serverVersion() string {
	bin := os.Getenv("VALKEY_SERVER")
	if bin == "" {
		bin = "valkey-server"
	}
	return strings.TrimSpace(firstLine(commandOutput(bin, "--version")))
}

func commandOutput(name string, args ...string) string {
	if name == "" {
		return ""
	}
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return ""
	}
	return string(out)
}
