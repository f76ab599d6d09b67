package main

import (
	"fmt"
	"strings"
	"time"
)

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
