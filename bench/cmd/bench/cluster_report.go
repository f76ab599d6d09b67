package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// clusterResults are the Cluster scenario's figures, with the run's own conditions: it may run
// alone (-only cluster) into a report an earlier full run wrote.
type clusterResults struct {
	shape                                       shape
	reps, parallelism                           int
	runs                                        map[string]map[string][]clusterRun // case or "plugin" -> command -> timed runs
	groupsOn                                    map[string][]int                   // case -> groups on each primary
	date, terraform, valkey, loadStart, loadEnd string
	elapsed                                     time.Duration
}

// Markers around the section in the report, so that -only cluster can replace it in place.
const (
	clusterBegin = "<!-- bench: cluster, begin -->"
	clusterEnd   = "<!-- bench: cluster, end -->"
)

func (c *clusterResults) spread(key, op string, value func(clusterRun) float64) spread {
	var xs []float64
	for _, r := range c.runs[key][op] {
		xs = append(xs, value(r))
	}
	return summarize(xs)
}

// floorRatio pairs a case's runs with the floor's of the same repetition (they ran back to
// back), as the main tables do.
func (c *clusterResults) floorRatio(key, op string) spread {
	ours, floor := c.runs[key][op], c.runs["plugin"][op]
	var xs []float64
	for i := range min(len(ours), len(floor)) {
		if floor[i].Wall > 0 {
			xs = append(xs, float64(ours[i].Wall)/float64(floor[i].Wall))
		}
	}
	return summarize(xs)
}

func rssOf(r clusterRun) float64 { return float64(r.RSSKiB) / 1024 }

// setupCommands each cost a round trip of their own that opens a connection (HELLO, and SELECT
// when a database is asked for) or a provider process's view of the cluster (the slot map, and
// the command table go-redis routes by): the same for 10 groups as for 10,000.
var setupCommands = []string{"hello", "select", "cluster|slots", "command"}

func (n nodeCount) setup() int64 {
	var trips int64
	for _, c := range setupCommands {
		trips += n.cmds[c]
	}
	return trips
}

// tripsOn is the median of round trips on primary i (all primaries together when i < 0); with
// work, only those beyond the set-up round trips.
func (c *clusterResults) tripsOn(key, op string, i int, work bool) float64 {
	count := func(n nodeCount) int64 {
		if work {
			return n.trips - n.setup()
		}
		return n.trips
	}
	return c.spread(key, op, func(r clusterRun) float64 {
		if i >= 0 {
			return float64(count(r.nodes[i]))
		}
		var n int64
		for _, node := range r.nodes {
			n += count(node)
		}
		return float64(n)
	}).med
}

// markdown renders the scenario's section: conditions, targets, tables.
func (c *clusterResults) markdown() string {
	var b strings.Builder
	verdict := map[bool]string{true: "**met**", false: "**missed**"}
	n := float64(c.shape.N)
	fmt.Fprintf(&b, "%s\n## Cluster mode: %d groups over %d hash-tagged streams on 3 primaries\n\n", clusterBegin, c.shape.N, c.shape.K)
	fmt.Fprintf(&b, "- Date: %s; the scenario took %s; timed runs per case: %d; `terraform -parallelism=%d`\n", c.date, c.elapsed, c.reps, c.parallelism)
	fmt.Fprintf(&b, "- %s; %s on every node; the provider and `rsswrap` built as above\n", c.terraform, c.valkey)
	fmt.Fprintf(&b, "- Load average (1, 5, 15 min) at start: %s; at end: %s, on %d cores shared with other work\n\n", c.loadStart, c.loadEnd, runtime.NumCPU())
	b.WriteString(clusterMethod)

	b.WriteString("### Targets\n\n")
	for _, cc := range clusterCases[1:] {
		for _, op := range clusterOps {
			r := c.floorRatio(cc.key, op)
			fmt.Fprintf(&b, "- %s, %s within 1.10x of the plugin floor: %s — %s.\n", cc.label, op, verdict[r.med <= 1.10], times(r))
		}
	}
	for _, cc := range clusterCases[1:] {
		for _, op := range clusterOps {
			ours, one := c.tripsOn(cc.key, op, -1, true)/n, c.tripsOn("standalone", op, -1, true)/n
			worst := 0.0
			for i, groups := range c.groupsOn[cc.key] {
				if groups > 0 {
					worst = max(worst, c.tripsOn(cc.key, op, i, true)/float64(groups))
				}
			}
			all, allOne := c.tripsOn(cc.key, op, -1, false)/n, c.tripsOn("standalone", op, -1, false)/n
			fmt.Fprintf(&b, "- %s, %s: no more round trips per group than one server: %s for the work of the groups — %.3f per group "+
				"against %.3f beyond the set-up round trips (each primary's own groups: at most %.3f); %s with the set-up counted — %.3f "+
				"against %.3f, %.0f set-up round trips against %.0f (a pool and its handshakes on each primary, each provider process's "+
				"slot map and command table: the same for 10 groups as for 10,000).\n",
				cc.label, op, verdict[ours <= one], ours, one, worst, verdict[all <= allOne], all, allOne,
				c.tripsOn(cc.key, op, -1, false)-c.tripsOn(cc.key, op, -1, true), c.tripsOn("standalone", op, -1, false)-c.tripsOn("standalone", op, -1, true))
		}
	}
	for _, cc := range clusterCases[1:] {
		for _, op := range clusterOps {
			ours, one := c.spread(cc.key, op, rssOf).med, c.spread("standalone", op, rssOf).med
			fmt.Fprintf(&b, "- %s, %s: provider peak RSS within 1.2x of one server's: %s — %.1f MiB against %.1f MiB (%.2fx).\n",
				cc.label, op, verdict[ours <= 1.2*one], ours, one, ours/one)
		}
	}

	b.WriteString("\n### Results\n\n")
	fmt.Fprintf(&b, "Median (min–max) of %d timed runs. Ratios pair each run with the floor's of the same repetition.\n\n", c.reps)
	b.WriteString("| Case | Command | wall | / plugin floor | provider peak RSS, MiB | / one server | provider CPU, s |\n|---|---|---|---|---|---|---|\n")
	for _, op := range clusterOps {
		fmt.Fprintf(&b, "| plugin floor | %s | %s | — | %s | — | %.2f |\n", op, secs(c.spread("plugin", op, func(r clusterRun) float64 { return r.Wall.Seconds() })),
			mib(c.spread("plugin", op, rssOf)), c.spread("plugin", op, func(r clusterRun) float64 { return r.PluginCPU.Seconds() }).med)
		for _, cc := range clusterCases {
			wall := c.spread(cc.key, op, func(r clusterRun) float64 { return r.Wall.Seconds() })
			rss := c.spread(cc.key, op, rssOf)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.2fx | %.2f |\n", cc.label, op, secs(wall), times(c.floorRatio(cc.key, op)), mib(rss),
				rss.med/c.spread("standalone", op, rssOf).med, c.spread(cc.key, op, func(r clusterRun) float64 { return r.PluginCPU.Seconds() }).med)
		}
	}
	b.WriteString("\nRound trips by primary; set-up: those of `HELLO`, `SELECT`, `CLUSTER SLOTS` and `COMMAND`, each a round trip of its own.\n\n")
	b.WriteString("| Case | Command | primary | groups there | round trips | set-up | beyond set-up, per group | connections | server commands |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, cc := range clusterCases {
		for _, op := range clusterOps {
			for i, groups := range c.groupsOn[cc.key] {
				trips, work := c.tripsOn(cc.key, op, i, false), c.tripsOn(cc.key, op, i, true)
				conns := c.spread(cc.key, op, func(r clusterRun) float64 { return float64(r.nodes[i].conns) }).med
				var cmds []map[string]int64
				for _, r := range c.runs[cc.key][op] {
					cmds = append(cmds, r.nodes[i].cmds)
				}
				_, by := medianCommands(cmds)
				fmt.Fprintf(&b, "| %s | %s | %d | %d | %.0f | %.0f | %.3f | %.0f | %s |\n", cc.label, op, i+1, groups, trips, trips-work,
					work/float64(max(groups, 1)), conns, breakdown(by))
			}
		}
	}
	b.WriteString(clusterEnd + "\n")
	return b.String()
}

const clusterMethod = `- Three deployments side by side in one run, each started for the scenario: one valkey-server; a
  cluster of 3 primaries (` + "`min_replica_acks = 0`" + `); and 3 primaries with a replica each
  (` + "`min_replica_acks = 1`" + `, the door's ` + "`WAIT`" + ` on the primary that ran the create). The streams are
  ` + "`bench:{s<i>}:stream`" + `, hash-tagged, so they spread over the primaries by slot; each primary's share is in
  the last table.
- Each case and the plugin floor run apply, then a no-change plan, from an empty server and an empty
  state, once untimed and then in rotating order, the floor between them, so ratios pair runs made
  back to back.
- Round trips: every primary (and the one server) is reached through a counting proxy, for the
  timed runs too, so every case pays the same hop. A cluster's primaries announce the proxies' ports
  (` + "`cluster-announce-port`" + `), so the slot map, ` + "`MOVED`" + ` and ` + "`ASK`" + ` lead the provider there; replicas
  replicate through them unseen. The proxy counts only the provider's connections (they open with
  ` + "`HELLO`" + `): a round trip begins when the client writes after the server last did. Handshakes count.
- Peak RSS: the largest provider process of the command (` + "`rsswrap`" + `).

`

// clusterAlone is -only cluster: the scenario alone, its section put in place of the one in the
// report (the rest is kept, and the notes are appended anew).
func clusterAlone(ctx context.Context, cfg config, out string, tf *terraform) error {
	c, err := runCluster(ctx, cfg, out, tf)
	if err != nil {
		return err
	}
	section := c.markdown()
	fmt.Println(section)
	if cfg.report == "" {
		return nil
	}
	report, err := os.ReadFile(cfg.report)
	if err != nil {
		return fmt.Errorf("-only cluster replaces the cluster section of a report a full run wrote: %w", err)
	}
	notes, _ := os.ReadFile(cfg.notes)
	spliced, err := spliceCluster(string(report), section, string(notes))
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.report, err)
	}
	if err := os.WriteFile(cfg.report, []byte(spliced), 0o644); err != nil {
		return err
	}
	logf("wrote the cluster section of %s", cfg.report)
	return nil
}

// spliceCluster puts section where a full run puts it: in place of the report's cluster
// section, or in a report without one before the query section, else before the notes. The
// notes at the end are replaced with the notes as they are now.
func spliceCluster(report, section, notes string) (string, error) {
	body := report
	if first, _, _ := strings.Cut(notes, "\n"); first != "" {
		if i := strings.LastIndex(report, "\n"+first+"\n"); i >= 0 {
			body = report[:i+1]
		}
	}
	before, after := body, ""
	if at := strings.Index(body, clusterBegin); at >= 0 {
		end := strings.Index(body[at:], clusterEnd)
		if end < 0 {
			return "", errors.New("its cluster section has no end marker")
		}
		before, after = body[:at], body[at+end+len(clusterEnd):]
	} else if at := strings.Index(body, queryBegin); at >= 0 {
		before, after = body[:at], body[at:]
	} else if body == report && notes != "" {
		return "", errors.New("found neither its cluster section, the query section nor the notes to put one before")
	}
	spliced := strings.TrimRight(before, "\n") + "\n\n" + section
	if rest := strings.TrimSpace(after); rest != "" {
		spliced += "\n" + rest + "\n"
	}
	if notes != "" {
		spliced += "\n" + notes
	}
	return spliced, nil
}
