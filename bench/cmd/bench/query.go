package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
)

// The query scenario: `terraform query` lists the groups of N streams, three each, by pattern,
// through our list resource, on Terraform 1.14 or later.

var (
	querySizes = flag.String("query-sizes", "2500,10000", "comma-separated N for the query scenario (N streams, 3 groups each, listed by pattern)")
	queryCLI   = flag.String("query-terraform", cachedTool("terraform-1.16.4"),
		"Terraform 1.14 or later, for the query scenario (make bench passes the 1.16.4 that scripts/setup.sh builds)")
)

type queryScenario struct{}

func (queryScenario) name() string { return "query" }

// queryMatch is the pattern listed; queryGroups are the groups of every stream it matches.
const queryMatch = "bench:q:orders:*"

var queryGroups = []string{"billing", "audit", "team/search"}

// queryOp is the scenario's one command.
const queryOp = "query"

// querySeedBatch is how many commands one seeding pipeline carries.
const querySeedBatch = 1000

// querySeed is what one size put on the server.
type querySeed struct {
	streams   int // matched streams, len(queryGroups) groups each
	other     int // keys of other types that match the pattern (strings and hashes)
	unmatched int // streams with a group whose keys the pattern does not match
}

func (s querySeed) keys() int { return s.streams + s.other + s.unmatched }

func queryStream(i int) string { return fmt.Sprintf("bench:q:orders:%d", i) }

// seedQuery empties the server, then puts on it n matched streams of three groups each, n/10
// strings and n/10 hashes that match the pattern (SCAN's TYPE filter must drop them), and n/5
// streams with a group under bench:q:payments:, which the pattern must not match. The commands
// go querySeedBatch to a pipeline. Database 0, as the other scenarios: another database would
// cost every connection of the provider a SELECT.
func seedQuery(ctx context.Context, rdb *redis.Client, n int) (querySeed, error) {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return querySeed{}, err
	}
	seed := querySeed{streams: n, other: 2 * (n / 10), unmatched: n / 5}
	var cmds []func(redis.Pipeliner)
	for i := range n {
		for _, g := range queryGroups {
			cmds = append(cmds, func(p redis.Pipeliner) { p.XGroupCreateMkStream(ctx, queryStream(i), g, "$") })
		}
	}
	for i := range n / 10 {
		cmds = append(cmds,
			func(p redis.Pipeliner) { p.Set(ctx, fmt.Sprintf("bench:q:orders:%d:note", i), "not a stream", 0) },
			func(p redis.Pipeliner) { p.HSet(ctx, fmt.Sprintf("bench:q:orders:%d:meta", i), "owner", "bench") })
	}
	for i := range n / 5 {
		cmds = append(cmds, func(p redis.Pipeliner) {
			p.XGroupCreateMkStream(ctx, fmt.Sprintf("bench:q:payments:%d", i), "billing", "$")
		})
	}
	for batch := range slices.Chunk(cmds, querySeedBatch) {
		if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range batch {
				c(p)
			}
			return nil
		}); err != nil {
			return seed, fmt.Errorf("seeding %d streams: %w", n, err)
		}
	}
	got, err := rdb.DBSize(ctx).Result()
	if err != nil {
		return seed, err
	}
	if got != int64(seed.keys()) {
		return seed, fmt.Errorf("seeding %d streams: %d keys on the server, want %d", n, got, seed.keys())
	}
	return seed, nil
}

// writeQueryConfig writes the configuration and the query file for one size. The limit is
// twice what the pattern should find, so that a result too many shows as one.
func writeQueryConfig(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	main := "terraform {\n  required_providers {\n    valkey = { source = \"echomq/valkey\" }\n  }\n}\n\nprovider \"valkey\" {}\n"
	query := fmt.Sprintf("list \"valkey_stream_group\" \"orders\" {\n  provider = valkey\n  limit    = %d\n\n  config {\n    match = %q\n  }\n}\n",
		2*n*len(queryGroups), queryMatch)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "orders.tfquery.hcl"), []byte(query), 0o644)
}

// checkQueryOutput reads `terraform query -json` and checks that it found each seeded group
// exactly once and nothing else.
func checkQueryOutput(out []byte, n int) error {
	found := map[string]int{}
	results := 0
	for line := range bytes.Lines(out) {
		var msg struct {
			Type  string `json:"type"`
			Found struct {
				Identity map[string]string `json:"identity"`
			} `json:"list_resource_found"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.Type != "list_resource_found" {
			continue
		}
		results++
		found[msg.Found.Identity["stream"]+" "+msg.Found.Identity["name"]]++
	}
	want := n * len(queryGroups)
	if results != want || len(found) != want {
		return fmt.Errorf("terraform query found %d results (%d distinct groups), want %d", results, len(found), want)
	}
	for i := range n {
		for _, g := range queryGroups {
			if found[queryStream(i)+" "+g] != 1 {
				return fmt.Errorf("terraform query did not find group %s of %s exactly once", g, queryStream(i))
			}
		}
	}
	return nil
}

// queryResults are the scenario's figures.
type queryResults struct {
	sizes     []int
	seeds     map[int]querySeed
	runs      map[int][]opResult
	trips     map[int]tripCount
	terraform string
	reps      int
}

// run is the query scenario. Per size, in increasing order: the server seeded, one untimed run
// that warms up, one untimed run through the counting proxy, then the timed runs. Every run must
// find exactly the seeded groups.
func (queryScenario) run(ctx context.Context, b *bench) (string, error) {
	began, load := time.Now(), loadAvg()
	sizes := parseSizes("query-sizes", *querySizes)
	if b.quick && !isFlagSet("query-sizes") {
		sizes = []int{250, 1000}
	}
	if len(sizes) == 0 {
		return "", nil // -query-sizes '' leaves the scenario out
	}
	tf := b.terraform(*queryCLI)
	res := &queryResults{sizes: sizes, seeds: map[int]querySeed{}, runs: map[int][]opResult{}, trips: map[int]tripCount{},
		terraform: version(tf.bin, tf.env(), "version"), reps: b.reps}
	proxy, err := faultproxy.StartProxy(b.srv.Addr())
	if err != nil {
		return "", err
	}
	defer proxy.Close()
	// measured is one query of n through addr, with the server's command counts.
	measured := func(n int, dir, addr string) (opResult, error) {
		r, output, err := b.counted(ctx, tf, dir, queryOp, addr)
		if err == nil {
			if err = checkQueryOutput(output, n); err != nil {
				err = fmt.Errorf("%w (in %s)", err, dir)
			}
		}
		return r, err
	}
	for _, n := range sizes {
		logf("query: seeding %d streams with %d groups each", n, len(queryGroups))
		seed, err := seedQuery(ctx, b.rdb, n)
		if err != nil {
			return "", err
		}
		res.seeds[n] = seed
		dir := filepath.Join(b.out, "work", fmt.Sprintf("query-n%d", n))
		if err := writeQueryConfig(dir, n); err != nil {
			return "", err
		}
		logf("query: warm-up and round trips, N=%d", n)
		if _, err := measured(n, dir, b.srv.Addr()); err != nil {
			return "", fmt.Errorf("warm-up: %w", err)
		}
		proxy.Take()
		proxied, err := measured(n, dir, proxy.Addr())
		if err != nil {
			return "", err
		}
		trips, conns := proxy.Take()
		res.trips[n] = tripCount{trips, conns, proxied.cmds}
		for rep := range b.reps {
			logf("query: rep %d/%d N=%d", rep+1, b.reps, n)
			r, err := measured(n, dir, b.srv.Addr())
			if err != nil {
				return "", err
			}
			res.runs[n] = append(res.runs[n], r)
		}
	}
	return res.markdown(began, load), nil
}

// check fails early, before any measuring, when the CLI cannot run `terraform query`.
func (queryScenario) check(*bench) error {
	const fix = "build it with `scripts/setup.sh terraform@1.16.4` (make bench does), name another with -query-terraform, or leave the scenario out with -query-sizes ''"
	bin := *queryCLI
	if strings.TrimSpace(*querySizes) == "" {
		return nil
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("the query scenario needs Terraform 1.14 or later, and %s is missing: %s", bin, fix)
	}
	cmd := exec.Command(bin, "query", "-help")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=/dev/null")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the query scenario needs Terraform 1.14 or later, and %s (%s) has no query command: %s",
			bin, version(bin, cmd.Env, "version"), fix)
	}
	return nil
}

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
	return tripCount{trips: t.otherKinds}.describe()
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
