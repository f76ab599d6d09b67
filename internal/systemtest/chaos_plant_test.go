package systemtest

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
)

// Planted bugs: each is a mutation of one production function, built into a provider of its
// own with `go build -overlay` (the source stays as it is, and no test hook is compiled in).
// TestChaosPlantSites holds each to the source in every plain go test; TestChaosPlanted shows
// that the campaign catches each; CHAOS_PLANT=<name> runs TestChaos (and so make chaos) against
// one of them, which is how a planted failure is replayed.

type chaosPlant struct {
	name string
	mode chaosMode // standalone when empty
	pkg  string    // the package's directory, from the module's root
	// fn is the function or method ("Type.Method") of pkg that holds the site, and old is code
	// that must occur exactly once in it. old is matched by its tokens, so layout and comments
	// do not count; new replaces the tokens matched.
	fn       string
	old, new string
	caughtBy []string
	// hintSeeds caught it early when last measured; the search goes on past them, since a change
	// to the campaign or to the provider changes what a seed's steps meet.
	hintSeeds string
	// byOrder marks a bug that shows or not by the order Terraform plans resources in, which its
	// parallel walk does not fix, so a step may show it in one run and not the next: a replay
	// then runs the whole seed again and counts as alike when it breaks the same invariant.
	byOrder bool
}

var chaosPlants = []chaosPlant{
	{
		name: "resent-create", pkg: "internal/valkey", fn: "createCmd.NoRetry",
		// go-redis then resends the door's pipeline after a broken connection.
		old:       "return true",
		new:       "return false",
		caughtBy:  []string{invariantCreateOnce, invariantAdopted},
		hintSeeds: "1",
	},
	{
		// A refresh whose XINFO GROUPS failed drops the group from state: the error it would
		// give is left unreached.
		name: "state-dropped-on-failed-refresh", pkg: "internal/provider", fn: "streamGroupResource.Read",
		old: `client.Group(ctx, stream.ValueString(), name.ValueString())
	if err != nil {`,
		new: `client.Group(ctx, stream.ValueString(), name.ValueString())
	if err != nil {
		resp.State.RemoveResource(ctx)
		return`,
		caughtBy:  []string{invariantState},
		hintSeeds: "1",
	},
	{
		name: "adopted-after-lost-reply", pkg: "internal/valkey", fn: "Client.ensureResult",
		// A lost reply, then a group on the server: reported as adopted.
		old:       "	return 0, Group{}, unknown\n}",
		new:       "	if unknown.Now.GroupExists {\n\t\treturn Adopted, unknown.Now.Group, nil\n\t}\n\treturn 0, Group{}, unknown\n}",
		caughtBy:  []string{invariantAdopted, invariantUnknown},
		hintSeeds: "4",
	},
	// One plant for each promise of the README's group door (what Create sends and what it
	// makes of each reply, what Delete and a refresh do), each caught by an invariant that
	// knows nothing of the plant.
	{
		// A create whose reply came after command_timeout, reported as a known failure
		// ("Consumer Group Not Created") instead of Outcome Unknown: the bug that once escaped.
		name: "late-reply-known-failure", pkg: "internal/valkey", fn: "Client.ensureResult",
		old:       "if isReply || neverWritten(err) || errors.Is(err, redis.ErrClosed) {",
		new:       "if isReply || neverWritten(err) || errors.Is(err, redis.ErrClosed) || strings.Contains(err.Error(), \"i/o timeout\") {",
		caughtBy:  []string{invariantUnknown},
		hintSeeds: "4",
	},
	{
		// Outcome Unknown says the wrong why: a reply past command_timeout told as a closed
		// connection, and a dropped or cut one as a timeout, so the advice misleads.
		name: "lost-reply-cause-swapped", pkg: "internal/valkey", fn: "UnknownOutcomeError.Cause",
		old:       "case timedOut(e.Err):\n\t\treturn CauseTimeout\n\tcase connClosed(e.Err) || errors.Is(e.Err, io.ErrUnexpectedEOF):\n\t\treturn CauseClosed",
		new:       "case timedOut(e.Err):\n\t\treturn CauseClosed\n\tcase connClosed(e.Err) || errors.Is(e.Err, io.ErrUnexpectedEOF):\n\t\treturn CauseTimeout",
		caughtBy:  []string{invariantUnknown},
		hintSeeds: "4",
	},
	{
		// BUSYGROUP (the group exists) recorded as created, adopted = false.
		name: "busygroup-recorded-created", pkg: "internal/valkey", fn: "ensureOutcome",
		old:       "strings.HasPrefix(msg, \"BUSYGROUP\") {\n\t\treturn Adopted, nil",
		new:       "strings.HasPrefix(msg, \"BUSYGROUP\") {\n\t\treturn Created, nil",
		caughtBy:  []string{invariantAdopted},
		hintSeeds: "1",
	},
	{
		// Every error reply swallowed as BUSYGROUP is: WRONGTYPE, LOADING, NOPERM read as an
		// existing group, and recorded.
		name: "error-reply-swallowed", pkg: "internal/valkey", fn: "ensureOutcome",
		old:       "isReply && strings.HasPrefix(msg, \"BUSYGROUP\") {",
		new:       "isReply && !strings.HasPrefix(msg, \"+\") {",
		caughtBy:  []string{invariantState, invariantAdopted},
		hintSeeds: "9",
	},
	{
		// group_start "new" sent as ID 0, so the group replays the stream.
		name: "start-new-sent-as-head", pkg: "internal/valkey", fn: "Start.ID",
		old:       "case StartNew:\n\t\treturn \"$\", nil",
		new:       "case StartNew:\n\t\treturn \"0\", nil",
		caughtBy:  []string{invariantStart},
		hintSeeds: "1",
	},
	{
		// An adopted group recorded without the warning that says so: Create's one warning is
		// attached by nothing.
		name: "adoption-unwarned", pkg: "internal/provider", fn: "streamGroupResource.Create",
		old:       "warnOnResource(&resp.Diagnostics,",
		new:       "func(any, ...string) {}(&resp.Diagnostics,",
		caughtBy:  []string{invariantAdopted},
		hintSeeds: "1",
	},
	{
		// A written create tried again when its reply is lost, as if nothing had been sent.
		name: "lost-reply-retried", pkg: "internal/valkey", fn: "Client.EnsureGroup",
		old:       "if !neverWritten(err) || attempt >= c.retries {",
		new:       "if err == nil || attempt >= c.retries {",
		caughtBy:  []string{invariantCreateOnce, invariantAdopted},
		hintSeeds: "1",
	},
	{
		// Delete sends XGROUP DESTROY before its warning that the group stays: the group goes
		// from the server with the resource.
		name: "delete-destroys-group", pkg: "internal/provider", fn: "streamGroupResource.Delete",
		old: "warnOnResource(&resp.Diagnostics,",
		new: "if c := r.data.clientFor(&resp.Diagnostics, \"Consumer Group Not Deleted\", \"\"); c != nil {\n" +
			"\t\t_ = c.Universal().XGroupDestroy(ctx, state.Stream.ValueString(), state.Name.ValueString()).Err()\n\t}\n" +
			"\twarnOnResource(&resp.Diagnostics,",
		caughtBy:  []string{invariantOnlyReads},
		hintSeeds: "1",
	},
	{
		// A refresh keeps a group the server no longer holds, so it is never created again.
		name: "gone-group-kept", pkg: "internal/provider", fn: "streamGroupResource.Read",
		old:       "\t\tresp.State.RemoveResource(ctx)\n\t}\n}",
		new:       "\t}\n}",
		caughtBy:  []string{invariantState},
		hintSeeds: "1",
	},
	{
		// XGROUP CREATE without MKSTREAM: a group on a stream that does not exist yet fails
		// instead of creating the stream with it.
		name: "mkstream-dropped", pkg: "internal/valkey", fn: "Client.createOnce",
		old:       `id, "MKSTREAM")}`,
		new:       `id)}`,
		caughtBy:  []string{invariantNamed, invariantServer},
		hintSeeds: "1",
	},
	{
		// A server that could not be reached reported as a created group, and recorded.
		name: "unreachable-recorded-created", pkg: "internal/valkey", fn: "Client.ensureResult",
		old:       "case err == nil:\n\t\treturn outcome, g, nil",
		new:       "case err == nil || neverWritten(err):\n\t\treturn Created, Group{Name: group}, nil",
		caughtBy:  []string{invariantState, invariantAdopted},
		hintSeeds: "1",
	},
	{
		// The plan's backlog warning says head skips and new replays: the one decision that
		// cannot be taken back, previewed backwards.
		name: "replay-and-skip-swapped", pkg: "internal/provider", fn: "streamGroupResource.warnBacklog",
		old:       "case plan.GroupStart.ValueString() == string(valkey.StartHead):",
		new:       "case plan.GroupStart.ValueString() == string(valkey.StartNew):",
		caughtBy:  []string{invariantPreview},
		hintSeeds: "2",
	},
	{
		// The adoption warning's lag one off: a wrong figure in a plan a reviewer trusts.
		name: "adoption-lag-off-by-one", pkg: "internal/provider", fn: "formatLag",
		old:       "return strconv.FormatInt(*n, 10)",
		new:       "return strconv.FormatInt(*n+1, 10)",
		caughtBy:  []string{invariantPreview},
		hintSeeds: "1",
	},
	{
		// The note that a stream will be created given once per plan, not once per stream: a
		// second absent stream goes unmentioned. Which one keeps the note is which one Terraform
		// plans first, so where a fault leaves one absent stream unchecked, the bug shows or not
		// by that order.
		name: "stream-note-once-per-plan", pkg: "internal/provider", fn: "streamGroupResource.previewCreate",
		old:       `r.data.plan.once("created " + stream)`,
		new:       `r.data.plan.once("created")`,
		caughtBy:  []string{invariantPreview},
		byOrder:   true,
		hintSeeds: "84,77",
	},
	{
		// An import ID split at its first "/", not its last: a stream key holding "/"
		// ("emq:{d}:stream/main") reads as another stream, and the import fails.
		name: "import-id-split-at-first-slash", pkg: "internal/provider", fn: "parseGroupID",
		old:       `i := strings.LastIndex(id, "/")`,
		new:       `i := strings.Index(id, "/")`,
		caughtBy:  []string{invariantImport},
		hintSeeds: "7",
	},
	{
		// The bug the campaign found in Cluster mode, put back: a failed load of the slot map
		// is ignored before the first command, so go-redis loads it again inside the create's
		// pipeline, and a failure there reads as the create's lost reply.
		name: "cluster-slot-map-ignored", mode: chaosCluster, pkg: "internal/valkey", fn: "Client.routed",
		old: "if _, err := cluster.MasterForKey(ctx, key); err != nil {",
		new: "if _, err := cluster.MasterForKey(ctx, key); err != nil && key == \"\\x00never\" {",
		// Caught by the slot-map steps (slotMapSteps): an apply past its refresh whose creates
		// meet a slot map that does not load.
		caughtBy:  []string{invariantUnknown},
		hintSeeds: "1",
	},
}

func findPlant(name string) (chaosPlant, bool) {
	i := slices.IndexFunc(chaosPlants, func(p chaosPlant) bool { return p.name == name })
	if i < 0 {
		return chaosPlant{}, false
	}
	return chaosPlants[i], true
}

// mutant is the file of the plant's package that holds its site, with old replaced by new. The
// site is found by the function that holds it and the tokens of old, so that a plant outlives
// code moving between the package's files, gofmt, and comments; it fails when the function is
// gone or holds old other than exactly once.
func (p chaosPlant) mutant() (source string, text []byte, err error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return "", nil, err
	}
	pkg, err := build.ImportDir(filepath.Join(root, p.pkg), 0)
	if err != nil {
		return "", nil, err
	}
	fset := token.NewFileSet()
	var fn *ast.FuncDecl
	for _, name := range pkg.GoFiles {
		name = filepath.Join(pkg.Dir, name)
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return "", nil, err
		}
		for _, d := range f.Decls {
			if d, ok := d.(*ast.FuncDecl); ok && funcName(d) == p.fn {
				source, fn = name, d
			}
		}
	}
	if fn == nil {
		return "", nil, fmt.Errorf("plant %s: %s has no function %s: update the plant to the source", p.name, p.pkg, p.fn)
	}
	src, err := os.ReadFile(source)
	if err != nil {
		return "", nil, err
	}
	base := fset.File(fn.Pos()).Base()
	from, to := int(fn.Pos())-base, int(fn.End())-base
	body, want := codeTokens(src[from:to]), codeTokens([]byte(p.old))
	var at []int
	for i := 0; i+len(want) <= len(body); i++ {
		if slices.EqualFunc(body[i:i+len(want)], want, func(a, b codeToken) bool { return a.tok == b.tok && a.lit == b.lit }) {
			at = append(at, i)
		}
	}
	if len(want) == 0 || len(at) != 1 {
		return "", nil, fmt.Errorf("plant %s: %s holds its mutation's code %d times, want once: update the plant to the source", p.name, p.fn, len(at))
	}
	start, end := from+body[at[0]].start, from+body[at[0]+len(want)-1].end
	return source, slices.Concat(src[:start], []byte(strings.TrimSpace(p.new)), src[end:]), nil
}

// funcName is a function's name, or a method's as "Type.Method".
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch g := t.(type) {
	case *ast.IndexExpr:
		t = g.X
	case *ast.IndexListExpr:
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

// codeToken is one token of Go source, with its byte range.
type codeToken struct {
	tok        token.Token
	lit        string
	start, end int
}

// codeTokens are the tokens of src, without comments and the semicolons Go inserts at line
// ends, so that two pieces of code compare alike whatever their layout.
func codeTokens(src []byte) []codeToken {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	var out []codeToken
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue
		}
		start := file.Offset(pos)
		n := len(lit)
		if n == 0 {
			n = len(tok.String())
		}
		out = append(out, codeToken{tok: tok, lit: lit, start: start, end: start + n})
	}
}

// overlay writes the plant's mutant and an overlay naming it into dir, for go build -overlay.
func (p chaosPlant) overlay(dir string) (string, error) {
	source, text, err := p.mutant()
	if err != nil {
		return "", err
	}
	mutant := filepath.Join(dir, filepath.Base(source))
	if err := os.WriteFile(mutant, text, 0o600); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {source: mutant}})
	if err != nil {
		return "", err
	}
	overlayFile := filepath.Join(dir, "overlay.json")
	return overlayFile, os.WriteFile(overlayFile, overlay, 0o600)
}

// build builds the provider with the plant into dir; the source stays as it is.
func (p chaosPlant) build(dir string) error {
	overlay, err := p.overlay(dir)
	if err != nil {
		return err
	}
	return buildProvider(dir, "-overlay", overlay)
}

// TestChaosPlantSites holds every plant to the source as it is, with no server and no CLI: its
// function holds its code exactly once (checked in a fraction of a second, -short too), and its
// package still compiles with the mutation. So a change that moves a plant's site fails here,
// not in the campaign's long run.
func TestChaosPlantSites(t *testing.T) {
	t.Parallel()
	for _, plant := range chaosPlants {
		if _, _, err := plant.mutant(); err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		return
	}
	if testing.Short() {
		t.Skip("each plant's site is found; compiling each plant's package takes about 20 s on two cores after a change to the source")
	}
	for _, plant := range chaosPlants {
		t.Run(plant.name, func(t *testing.T) {
			t.Parallel()
			overlay, err := plant.overlay(t.TempDir())
			acctest.MustDo(t, err)
			// Without optimisation: the check is that it compiles, and it compiles in half the time.
			cmd := exec.Command("go", "build", "-gcflags=-N -l", "-overlay", overlay, "./"+plant.pkg)
			cmd.Dir = "../.."
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("plant %s: %s does not compile with the mutation: %v\n%s", plant.name, plant.pkg, err, out)
			}
		})
	}
}

// TestChaosPlanted runs the campaign against each planted bug until a seed catches it (the
// plant's hint seeds first, then more, CHAOS_STEPS steps each, at most CHAOS_PLANTED_SEEDS
// seeds), and fails unless it is caught, by one of the invariants that guard it. Then it runs
// the steps up to the failing one CHAOS_PLANTED_REPLAYS times more (default 1), and fails
// unless each replay fails at the same step with the same invariant: the proof that a failure
// replays. It runs when CHAOS_PLANTED is set (to 1, or to the plants' names, comma-separated).
func TestChaosPlanted(t *testing.T) {
	t.Parallel()
	needCLI(t)
	want := os.Getenv("CHAOS_PLANTED")
	if want == "" {
		t.Skip("set CHAOS_PLANTED=1 to show that the campaign catches each planted bug")
	}
	steps, maxSeeds, replays := 60, 40, 1
	if v, err := envInt("CHAOS_STEPS"); err != nil || v > 0 {
		acctest.MustDo(t, err)
		steps = v
	}
	if v, err := envInt("CHAOS_PLANTED_SEEDS"); err != nil || v > 0 {
		acctest.MustDo(t, err)
		maxSeeds = v
	}
	if v, err := envInt("CHAOS_PLANTED_REPLAYS"); err != nil || v > 0 {
		acctest.MustDo(t, err)
		replays = v
	}
	// The plants run side by side (go test's -parallel, GOMAXPROCS by default): each builds its
	// own provider and starts its own servers, and waits on them more than on the CPU. found
	// keeps each plant's report line in the plants' order.
	var mu sync.Mutex
	found := make([]string, len(chaosPlants))
	if path := os.Getenv("CHAOS_CAMPAIGN"); path != "" {
		t.Cleanup(func() {
			appendPlantsToCampaign(t, path, slices.DeleteFunc(found, func(s string) bool { return s == "" }))
		})
	}
	for i, plant := range chaosPlants {
		if want != "1" && !slices.Contains(strings.Split(want, ","), plant.name) {
			continue
		}
		mode := chaosStandalone
		if plant.mode != "" {
			mode = plant.mode
		}
		report := func(line string) {
			mu.Lock()
			defer mu.Unlock()
			found[i] = line
		}
		t.Run(plant.name, func(t *testing.T) {
			t.Parallel()
			needChaosServers(t, mode)
			dir := t.TempDir()
			acctest.MustDo(t, plant.build(dir))
			seeds := chaosSeedList(t, plant.hintSeeds)
			for s := int64(1); len(seeds) < maxSeeds; s++ {
				if !slices.Contains(seeds, s) {
					seeds = append(seeds, s)
				}
			}
			for n, seed := range seeds[:min(len(seeds), maxSeeds)] {
				stats := newChaosStats(mode, seed)
				f := runChaos(t, mode, chaosSteps(mode, seed, steps), dir, stats)
				if f == nil {
					t.Logf("seed %d: %d steps, not caught", seed, stats.Steps)
					continue
				}
				if !slices.Contains(plant.caughtBy, f.Invariant) {
					t.Fatalf("seed %d caught plant %s by another invariant than those that guard it (%q):\n%s", seed, plant.name, plant.caughtBy, f)
				}
				drawn := chaosSteps(mode, seed, steps)
				at := fmt.Sprintf("step %d (%s)", f.Step, f.kind(drawn))
				if f.Step == 0 {
					at = "the final convergence"
				} else if !plant.byOrder {
					drawn = drawn[:f.Step]
				}
				if plant.byOrder {
					at += "; replays: the whole seed, the same invariant (plan order)"
				}
				alike := 0
				for run := 1; run <= replays; run++ {
					again := runChaos(t, mode, drawn, dir, stats.shrinking())
					byOrder := plant.byOrder && again != nil && again.Invariant == f.Invariant
					if outcomeOf(again) == outcomeOf(f) || byOrder {
						alike++
					} else {
						t.Errorf("replay is not exact: plant %s, %s seed %d %s, then replay %d %s", plant.name, mode, seed, outcomeOf(f), run, outcomeOf(again))
					}
				}
				report(fmt.Sprintf("| %s | %s | %s | %d | %s | %d | %d of %d |\n", plant.name, mode, f.Invariant, seed, at, n+1, alike, replays))
				t.Logf("plant %s caught by %s seed %d %s (%d steps run)\n%s\nreplay: CHAOS_PLANT=%s make chaos MODE=%s SEED=%d STEPS=%d",
					plant.name, mode, seed, f.where(), stats.Steps, f, plant.name, mode, seed, max(f.Step, stats.Steps))
				return
			}
			report(fmt.Sprintf("| %s | %s | NOT CAUGHT | | | %d | |\n", plant.name, mode, maxSeeds))
			t.Fatalf("plant %s was not caught by %d seeds of %d steps", plant.name, maxSeeds, steps)
		})
	}
}

func envInt(name string) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil {
		return 0, fmt.Errorf("%s=%q is not a number", name, v)
	}
	return n, nil
}
