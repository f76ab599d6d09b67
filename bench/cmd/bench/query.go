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
