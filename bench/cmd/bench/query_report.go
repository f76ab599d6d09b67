package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The query scenario's section of the report.

// summary is a median (with range) over the timed runs of n.
func (q *queryResults) summary(n int, value func(opResult) float64) spread {
	return over(q.runs[n], value)
}

// queryTrips sorts the proxied run's round trips by what they carried.
type queryTrips struct {
	scan, xinfo, other  int64            // round trips carrying SCAN, XINFO GROUPS (and nothing else), anything else
	xinfoCmds           int64            // XINFO GROUPS commands in those round trips
	largest, smallest   int64            // XINFO GROUPS in the largest and the smallest of them
	otherKinds          map[string]int64 // the other round trips by what they carried
	total, connections  int64
	scanCmds, xinfoRead int64 // SCAN and XINFO GROUPS calls the server counted in the same run
}

func (q *queryResults) tripsOf(n int) queryTrips {
	tc := q.trips[n]
	t := queryTrips{otherKinds: map[string]int64{}, total: tc.total(), connections: tc.conns,
		scanCmds: tc.cmds["scan"], xinfoRead: tc.cmds["xinfo|groups"]}
	for sig, count := range tc.trips {
		cmds := strings.Split(sig, " + ")
		xinfo, scan := int64(0), int64(0)
		for _, c := range cmds {
			switch c {
			case "XINFO GROUPS":
				xinfo++
			case "SCAN":
				scan++
			}
		}
		switch {
		case xinfo == int64(len(cmds)):
			t.xinfo += count
			t.xinfoCmds += xinfo * count
			t.largest = max(t.largest, xinfo)
			if t.smallest == 0 || xinfo < t.smallest {
				t.smallest = xinfo
			}
		case scan == int64(len(cmds)):
			t.scan += count
		default:
			t.other += count
			t.otherKinds[collapse(cmds)] += count
		}
	}
	return t
}

// collapse names a round trip's commands with repeats counted: "HELLO + CLIENT SETINFO × 2".
func collapse(cmds []string) string {
	var parts []string
	for i := 0; i < len(cmds); {
		j := i
		for j < len(cmds) && cmds[j] == cmds[i] {
			j++
		}
		if j-i > 1 {
			parts = append(parts, fmt.Sprintf("%s × %d", cmds[i], j-i))
		} else {
			parts = append(parts, cmds[i])
		}
		i = j
	}
	return strings.Join(parts, " + ")
}

func (t queryTrips) describeOther() string {
	if len(t.otherKinds) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(t.otherKinds)) {
		parts = append(parts, fmt.Sprintf("%d × [%s]", t.otherKinds[k], k))
	}
	return strings.Join(parts, ", ")
}

// markdown renders the scenario's section of the report: its conditions, its targets and its
// tables.
func (q *queryResults) markdown(began time.Time, load string) string {
	var b strings.Builder
	lo, hi := q.sizes[0], q.sizes[len(q.sizes)-1]
	b.WriteString(sectionHead("`terraform query`: listing groups by pattern", began, load,
		q.terraform+" (`terraform query` needs 1.14 or later)", fmt.Sprintf("%d timed runs per size", q.reps)))
	b.WriteString(queryMethod)

	b.WriteString("### Targets\n\n")
	b.WriteString("The targets are for 10,000 streams, with peak RSS compared at 2,500: they are checked at the largest size against the smallest.\n\n")
	if t := q.tripsOf(hi); t.total > 0 {
		beyond := t.total - t.scan
		per := float64(beyond) / (float64(hi) / 100)
		fmt.Fprintf(&b, "- At most one round trip per 100 streams beyond the SCAN pages, %d streams: %s — %d round trips beyond the %d SCAN pages, %.2f per 100 streams: %d pipelines of `XINFO GROUPS` (%d streams, %d to %d a pipeline) and %d other (%s).\n",
			hi, verdict(per <= 1), beyond, t.scan, per, t.xinfo, t.xinfoCmds, t.smallest, t.largest, t.other, t.describeOther())
	}
	if len(q.sizes) >= 2 && q.reps > 0 {
		rss := func(n int) spread {
			return q.summary(n, func(r opResult) float64 { return float64(r.RSSKiB) / 1024 })
		}
		a, c := rss(lo), rss(hi)
		fmt.Fprintf(&b, "- Provider peak RSS at %d streams within 1.2x of %d streams: %s — %.1f MiB against %.1f MiB (%.2fx), medians of %d timed runs each; the largest peak at %d over the smallest at %d: %.2fx.\n",
			hi, lo, verdict(c.med <= 1.2*a.med), c.med, a.med, c.med/a.med, q.reps, hi, lo, c.hi/a.lo)
	}
	fmt.Fprintf(&b, "- Every run found each of the %s groups exactly once and nothing else: **met** (a run that does not stops the bench).\n", groupCounts(q.sizes))

	b.WriteString("\n### Results\n\n")
	if q.reps > 0 {
		fmt.Fprintf(&b, "Median (min–max) of %d timed runs per size. Provider peak RSS: the largest provider process of the command (`rsswrap`). ", q.reps)
		b.WriteString("Terraform's peak: wait4's maxrss for Terraform, the largest of Terraform and the processes it waited for, so Terraform's own whenever it is above the provider's.\n\n")
		b.WriteString("| Streams (groups) | keys in the database | wall | groups per second | provider peak RSS, MiB | Terraform peak RSS, MiB | provider CPU, s | Terraform CPU, s | server commands |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
		for _, n := range q.sizes {
			wall := q.summary(n, func(r opResult) float64 { return r.Wall.Seconds() })
			rate := q.summary(n, func(r opResult) float64 { return float64(n*len(queryGroups)) / r.Wall.Seconds() })
			prov := q.summary(n, func(r opResult) float64 { return float64(r.RSSKiB) / 1024 })
			tree := q.summary(n, func(r opResult) float64 { return float64(r.TreeRSSKiB) / 1024 })
			pcpu := q.summary(n, func(r opResult) float64 { return r.PluginCPU.Seconds() })
			tcpu := q.summary(n, func(r opResult) float64 { return (r.CPU - r.PluginCPU).Seconds() })
			by := medianCommands(countsOf(q.runs[n]))
			fmt.Fprintf(&b, "| %d (%d) | %d | %s | %.0f | %s | %s | %.2f | %.2f | %s |\n", n, n*len(queryGroups), q.seeds[n].keys(),
				secs(wall), rate.med, mib(prov), mib(tree), pcpu.med, tcpu.med, breakdown(by))
		}
	}
	b.WriteString("\n| Streams | round trips | SCAN pages | `XINFO GROUPS` pipelines (streams) | other round trips | beyond SCAN, per 100 streams | connections | server: `SCAN`, `XINFO GROUPS` |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, n := range q.sizes {
		t := q.tripsOf(n)
		fmt.Fprintf(&b, "| %d | %d | %d | %d (%d) | %d | %.2f | %d | %d, %d |\n", n, t.total, t.scan, t.xinfo, t.xinfoCmds, t.other,
			float64(t.total-t.scan)/(float64(n)/100), t.connections, t.scanCmds, t.xinfoRead)
	}
	return b.String()
}

func groupCounts(sizes []int) string {
	var parts []string
	for _, n := range sizes {
		parts = append(parts, fmt.Sprint(n*len(queryGroups)))
	}
	return strings.Join(parts, " and ")
}

const queryMethod = `- One size after the other, on the emptied server, seeded once (pipelined, 1000 commands a round trip): N streams
  ` + "`bench:q:orders:<i>`" + ` with three groups each (` + "`billing`, `audit`, `team/search`" + `), N/10 strings and N/10 hashes
  that match the pattern (SCAN's TYPE filter drops them), and N/5 streams with a group under
  ` + "`bench:q:payments:`" + `, which the pattern does not match: 1.4N keys in all.
- The command: ` + "`terraform query -json`" + ` with one ` + "`list \"valkey_stream_group\"`" + ` block, ` + "`match = \"" + queryMatch + "\"`" + `, and
  ` + "`limit`" + ` at twice the groups it should find. Every run must find each seeded group exactly once and nothing
  else, or the bench stops.
- Wall time: the command end to end, Terraform included, against the server directly; one untimed run
  per size first, then the timed runs.
- Round trips: one more untimed run per size through the counting proxy (as above). The provider scans
  with ` + "`SCAN ... MATCH ... TYPE stream COUNT 1000`" + ` and reads each page's streams with one pipeline of
  ` + "`XINFO GROUPS`" + `. The target counts every round trip that is not a SCAN page (the pipelines, the
  connection handshakes and anything else) against one per 100 streams.
- Peak RSS: as above; the target compares the medians at the two sizes.

`
