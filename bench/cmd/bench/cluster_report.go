package main

import (
	"fmt"
	"strings"
	"time"
)

// The cluster scenario's section of the report.

// clusterTarget is the largest ratio allowed between a cluster case and the plugin floor.
const clusterTarget = 1.10

// clusterResults are the cluster scenario's figures.
type clusterResults struct {
	shape             clusterShape
	reps, parallelism int
	terraform         string
	runs              map[string]map[string][]clusterRun // case or clusterFloor -> command -> timed runs
	groupsOn          map[string][]int                   // case -> groups on each primary
}

func (c *clusterResults) value(key, op string, of func(clusterRun) float64) spread {
	return over(c.runs[key][op], of)
}

// floorRatio pairs a case's runs with the floor's of the same repetition (they ran back to back).
func (c *clusterResults) floorRatio(key, op string) spread {
	return paired(c.runs[key][op], c.runs[clusterFloor][op], clusterRun.wallSecs)
}

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
	return c.value(key, op, func(r clusterRun) float64 {
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

// markdown renders the scenario's section: conditions, method, targets, tables.
func (c *clusterResults) markdown(began time.Time, load string) string {
	var b strings.Builder
	b.WriteString(sectionHead(fmt.Sprintf("Cluster mode: %d groups over %d hash-tagged streams on 3 primaries", c.shape.n, c.shape.k), began, load,
		c.terraform+"; "+valkeyVersion()+" on every node", fmt.Sprintf("%d timed runs per case; `terraform -parallelism=%d`", c.reps, c.parallelism)))
	b.WriteString(clusterMethod)
	b.WriteString("### Targets\n\n")
	b.WriteString(c.targets())
	b.WriteString("\n### Results\n\n")
	b.WriteString(c.timesTable())
	b.WriteString(c.tripsTable())
	return b.String()
}

// targets checks each cluster case against the floor's time, one server's round trips per group,
// and one server's peak RSS.
func (c *clusterResults) targets() string {
	var b strings.Builder
	n := float64(c.shape.n)
	for _, cc := range clusterCases[1:] {
		for _, op := range clusterOps {
			r := c.floorRatio(cc.key, op)
			fmt.Fprintf(&b, "- %s, %s within %.2fx of the plugin floor: %s — %s.\n", cc.label, opLabels[op], clusterTarget, verdict(r.med <= clusterTarget), times(r))
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
				cc.label, opLabels[op], verdict(ours <= one), ours, one, worst, verdict(all <= allOne), all, allOne,
				c.tripsOn(cc.key, op, -1, false)-c.tripsOn(cc.key, op, -1, true), c.tripsOn("standalone", op, -1, false)-c.tripsOn("standalone", op, -1, true))
		}
	}
	for _, cc := range clusterCases[1:] {
		for _, op := range clusterOps {
			ours, one := c.value(cc.key, op, clusterRun.rssMiB).med, c.value("standalone", op, clusterRun.rssMiB).med
			fmt.Fprintf(&b, "- %s, %s: provider peak RSS within 1.2x of one server's: %s — %.1f MiB against %.1f MiB (%.2fx).\n",
				cc.label, opLabels[op], verdict(ours <= 1.2*one), ours, one, ours/one)
		}
	}
	return b.String()
}

func (c *clusterResults) timesTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Median (min–max) of %d timed runs. Ratios pair each run with the floor's of the same repetition.\n\n", c.reps)
	b.WriteString("| Case | Command | wall | / plugin floor | provider peak RSS, MiB | / one server | provider CPU, s |\n|---|---|---|---|---|---|---|\n")
	for _, op := range clusterOps {
		fmt.Fprintf(&b, "| plugin floor | %s | %s | — | %s | — | %.2f |\n", opLabels[op], secs(c.value(clusterFloor, op, clusterRun.wallSecs)),
			mib(c.value(clusterFloor, op, clusterRun.rssMiB)), c.value(clusterFloor, op, clusterRun.pluginSecs).med)
		for _, cc := range clusterCases {
			rss := c.value(cc.key, op, clusterRun.rssMiB)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.2fx | %.2f |\n", cc.label, opLabels[op], secs(c.value(cc.key, op, clusterRun.wallSecs)),
				times(c.floorRatio(cc.key, op)), mib(rss), rss.med/c.value("standalone", op, clusterRun.rssMiB).med,
				c.value(cc.key, op, clusterRun.pluginSecs).med)
		}
	}
	return b.String()
}

func (c *clusterResults) tripsTable() string {
	var b strings.Builder
	b.WriteString("\nRound trips by primary; set-up: those of `HELLO`, `SELECT`, `CLUSTER SLOTS` and `COMMAND`, each a round trip of its own.\n\n")
	b.WriteString("| Case | Command | primary | groups there | round trips | set-up | beyond set-up, per group | connections | server commands |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, cc := range clusterCases {
		for _, op := range clusterOps {
			for i, groups := range c.groupsOn[cc.key] {
				trips, work := c.tripsOn(cc.key, op, i, false), c.tripsOn(cc.key, op, i, true)
				conns := c.value(cc.key, op, func(r clusterRun) float64 { return float64(r.nodes[i].conns) }).med
				var cmds []map[string]int64
				for _, r := range c.runs[cc.key][op] {
					cmds = append(cmds, r.nodes[i].cmds)
				}
				fmt.Fprintf(&b, "| %s | %s | %d | %d | %.0f | %.0f | %.3f | %.0f | %s |\n", cc.label, opLabels[op], i+1, groups, trips, trips-work,
					work/float64(max(groups, 1)), conns, breakdown(medianCommands(cmds)))
			}
		}
	}
	return b.String()
}

const clusterMethod = `- Three deployments side by side in one run, each started for the scenario: one valkey-server; a
  cluster of 3 primaries (` + "`min_replica_acks = 0`" + `); and 3 primaries with a replica each
  (` + "`min_replica_acks = 1`" + `, the door's ` + "`WAIT`" + ` on the primary that ran the create). The configuration is the
  groups scenario's blocks, over K streams: group ` + "`g<i>`" + ` on ` + "`bench:{s<i mod K>}:stream`" + `, hash-tagged, so the
  streams spread over the primaries by slot (each primary's share is in the last table). No stream exists
  before the apply, whose plan warns once a stream (` + "`Will Be Created`" + `), whatever each group's start.
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
