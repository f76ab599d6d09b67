package systemtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
)

// The campaign's CLI steps: what each kind runs, and the checks after it.

// cliStep resolves the step's choices, runs its command with its faults injected, and checks
// every invariant against what it saw.
func (run *chaosRun) cliStep(ctx context.Context, s chaosStep, rng *rand.Rand) *chaosFailure {
	kind := s.Kind
	if kind == stepApplySaved && !run.saved || kind == stepConverge {
		kind = stepApply // with no edit
	}
	var notes []string
	var imp *chaosImport
	switch kind {
	case stepApply:
		if s.Kind == stepApply {
			notes = run.edit(rng)
		}
	case stepPlan:
		if rng.IntN(2) == 0 { // a change proposed for review
			notes = run.edit(rng)
		}
	case stepImportBlock, stepImportCLI:
		imp = run.chooseImport(rng)
		notes = append(notes, fmt.Sprintf("import %s as %s", chaosImportID(imp.To.Stream, imp.To.Name), imp.To.address()))
	}
	provider := run.tg.provider(s.MaxRetries)
	block := imp
	if kind == stepImportCLI {
		block = nil
	}
	if kind != stepApplySaved {
		run.cli.write(renderChaosConfig(provider, run.declared, block))
	}
	pre, err := readChaosState(run.cli.dir)
	acctest.MustDo(run.t, err)
	move, moved := run.reshardBefore(ctx, s)
	notes = append(notes, moved...)
	before := run.model.clone()
	server, err := readChaosServer(ctx, run.tg) // what the plan's previews must quote
	if err != nil {
		run.t.Fatalf("%s: reading the server: %v", s, err)
	}
	run.tg.log() // what earlier steps left
	run.cli.ctx = ctx

	faults := run.resolveFaults(s.Faults, rng, pre)
	for _, f := range faults {
		if f.Group != "" {
			notes = append(notes, "fault: "+describeFault(f))
		}
	}
	var ev *duringEvent // chaos_during_test.go
	if s.During != nil {
		ev = run.resolveDuring(ctx, s, pre, block)
		faults = append(faults, ev.fault)
		notes = append(notes, ev.describe())
	}
	run.tg.inject(faults...)
	if move != nil { // a whole move's step has no fault of its own
		move.proxy.Inject(append(slices.Clone(faults), move.trigger)...)
	}
	if s.Detach {
		if err := run.tg.detach(); err != nil {
			run.t.Fatalf("%s: detaching the replica: %v", s, err)
		}
		notes = append(notes, "the replica is detached from the primary (REPLICAOF NO ONE)")
	}
	res, savedNow, refreshed := run.runCommand(kind, s, rng)
	if ctx.Err() != nil {
		run.t.Fatalf("%s: terraform %s did not finish within the step's %v: it hung", s, res.command, chaosStepBudget)
	}
	if move != nil {
		note, err := move.wait()
		run.mustReshard(s, err)
		notes = append(notes, note)
	}
	if did, err := ev.close(); err != nil {
		run.t.Fatalf("%s: the event during the step: %s: %v", s, did, err)
	} else if did != "" {
		notes = append(notes, "the event "+did)
	}
	log, refused := run.tg.log() // before the faults go: their hits go with them
	run.tg.inject()
	if s.Detach {
		if err := run.tg.attach(); err != nil {
			run.t.Fatalf("%s: attaching the replica again: %v", s, err)
		}
	}

	post, err := readChaosState(run.cli.dir)
	acctest.MustDo(run.t, err)
	snap, err := readChaosServer(ctx, run.tg)
	if err != nil {
		run.t.Fatalf("%s: reading the server: %v", s, err)
	}
	modelProblems, predicted := run.model.applyCreates(log, snap, s.N, ev)
	if kind != stepPlan || savedNow {
		run.saved = savedNow
	}
	o := &chaosObservation{step: s, kind: kind, res: res, pre: pre, post: post,
		before: before, after: run.model, log: log, msgs: readChaosMessages(res.stdout), declared: map[string]chaosResource{},
		addrs: run.tg.addrs(), acted: actedIn(log) + refused + detached(s) + struck(log), refreshed: refreshed, mode: run.tg.mode,
		predicted: predicted, event: ev, server: server, global: refused + detached(s)}
	for _, r := range run.declared {
		o.declared[r.address()] = r
	}
	if imp != nil {
		o.imported = imp.To.address()
	}
	run.last = res
	run.count(s, log, refused)
	run.met(o, imp, refused)
	run.countDuring(ev, log)
	run.t.Logf("%s: %s, exit %v, %d commands, %d faults acted", s, strings.Join(notes, "; "), res.err, len(log), actedIn(log)+refused)
	describe := func() string {
		return fmt.Sprintf("%s\n  %s\n  exit: %v\n%s", s, strings.Join(notes, "\n  "), res.err, indent(string(res.output())))
	}
	for _, inv := range chaosInvariants {
		problems, checked := inv.check(o)
		run.stats.Checks[inv.name] += checked
		if len(problems) > 0 {
			return &chaosFailure{Step: s.N, Invariant: inv.name, Problems: problems, Context: describe()}
		}
	}
	run.stats.Checks[invariantServer]++
	if problems := append(modelProblems, snap.diff(run.model)...); len(problems) > 0 {
		return &chaosFailure{Step: s.N, Invariant: invariantServer, Problems: problems, Context: describe()}
	}
	return nil
}

// runCommand runs the step's command. savedNow tells whether a saved plan is ready to apply;
// refreshed, whether the command read every group in state from the server before it ended
// (a refresh, or a plan or apply that refreshes).
func (run *chaosRun) runCommand(kind stepKind, s chaosStep, rng *rand.Rand) (res cliResult, savedNow, refreshed bool) {
	r, p := run.cli, tfexec.Parallelism(s.Parallelism)
	// A fifth of plans and applies skip the refresh (-refresh=false, as pipelines that refresh
	// in a step of their own do): faults then reach the plan-time reads and the door with no
	// failed refresh before them.
	refreshing := s.Kind == stepConverge || rng.IntN(5) != 0
	if s.NoRefresh && kind != stepConverge {
		refreshing = false
	}
	refresh := tfexec.Refresh(refreshing)
	switch kind {
	case stepPlan:
		if rng.IntN(10) < 4 {
			res = r.plan(p, refresh, tfexec.Out(planFile))
			return res, res.err == nil, false
		}
		return r.plan(p, refresh), false, false
	case stepApplySaved:
		return r.apply(p, tfexec.DirOrPlan(planFile)), false, false
	case stepRefresh:
		// terraform refresh is apply -refresh-only, which takes the step's -parallelism
		// (terraform-exec gives terraform refresh none).
		return r.apply(p, tfexec.RefreshOnly(true)), false, true
	case stepImportCLI:
		imp := run.lastImport
		return r.importID(imp.address(), chaosImportID(imp.Stream, imp.Name)), false, false
	case stepDestroy:
		return r.destroy(p), false, false
	}
	return r.apply(p, refresh), false, refreshing
}

// edit changes the declared groups: adds, removes, changes group_start, or moves a resource
// to another group; it returns what it did.
func (run *chaosRun) edit(rng *rand.Rand) []string {
	var notes []string
	for range rng.IntN(4) {
		if len(run.declared) == 0 || len(run.declared) < 8 && rng.IntN(10) < 4 {
			stream, name, ok := run.unusedGroup(rng)
			if !ok {
				continue
			}
			run.nextAddr++
			r := chaosResource{Addr: fmt.Sprintf("r%d", run.nextAddr), Stream: stream, Name: name, Start: []string{"head", "new"}[rng.IntN(2)]}
			run.declared = append(run.declared, r)
			notes = append(notes, fmt.Sprintf("add %s: group %q of %q, %s", r.address(), name, stream, r.Start))
			continue
		}
		i := rng.IntN(len(run.declared))
		r := &run.declared[i]
		switch rng.IntN(3) {
		case 0:
			notes = append(notes, "remove "+r.address())
			run.declared = slices.Delete(run.declared, i, i+1)
		case 1:
			r.Start = map[string]string{"head": "new", "new": "head"}[r.Start]
			notes = append(notes, fmt.Sprintf("change %s's group_start to %s", r.address(), r.Start))
		default:
			if stream, name, ok := run.unusedGroup(rng); ok {
				r.Stream, r.Name = stream, name
				notes = append(notes, fmt.Sprintf("move %s to group %q of %q", r.address(), name, stream))
			}
		}
	}
	run.saved = false
	return notes
}

// unusedGroup is a (stream, name) that no declared resource names.
func (run *chaosRun) unusedGroup(rng *rand.Rand) (string, string, bool) {
	for range 20 {
		stream, name := chaosStreams[rng.IntN(len(chaosStreams))], chaosNames[rng.IntN(len(chaosNames))]
		if !slices.ContainsFunc(run.declared, func(r chaosResource) bool { return r.Stream == stream && r.Name == name }) {
			return stream, name, true
		}
	}
	return "", "", false
}

// chooseImport picks a group on the server that state does not hold (or, when there is none,
// one that does not exist, whose import must fail), and the resource to import it to: the one
// declaring it, or a new one.
func (run *chaosRun) chooseImport(rng *rand.Rand) *chaosImport {
	state, err := readChaosState(run.cli.dir)
	acctest.MustDo(run.t, err)
	declaredAt := func(g [2]string) int {
		return slices.IndexFunc(run.declared, func(r chaosResource) bool { return r.Stream == g[0] && r.Name == g[1] })
	}
	// A group can be imported when state does not hold it, and the resource declaring it (if
	// one does: an edit not applied yet) is not in state with another group.
	importable := func(g [2]string) bool {
		for _, e := range state {
			if e.group() == g {
				return false
			}
		}
		if i := declaredAt(g); i >= 0 {
			_, held := state[run.declared[i].address()]
			return !held
		}
		return true
	}
	var candidates [][2]string
	for _, g := range run.model.groups() {
		if importable(g) {
			candidates = append(candidates, g)
		}
	}
	var g [2]string
	if len(candidates) > 0 && rng.IntN(10) < 9 {
		g = candidates[rng.IntN(len(candidates))]
	} else {
		for range 20 { // most likely a group the server lacks, whose import must fail
			if g = [2]string{chaosStreams[rng.IntN(len(chaosStreams))], chaosNames[rng.IntN(len(chaosNames))]}; importable(g) {
				break
			}
		}
	}
	imp := &chaosImport{Identity: run.identity && rng.IntN(2) == 0}
	if i := declaredAt(g); i >= 0 {
		imp.To = run.declared[i]
	} else {
		run.nextAddr++
		imp.To = chaosResource{Addr: fmt.Sprintf("r%d", run.nextAddr), Stream: g[0], Name: g[1], Start: []string{"head", "new"}[rng.IntN(2)]}
		run.declared = append(run.declared, imp.To)
	}
	run.lastImport = imp.To
	run.saved = false
	return imp
}

// converge ends a campaign: the keys of other types go, and with no fault one apply must
// succeed (every invariant holding), the next plan must be empty, and every declared group
// must be on the server and in state with its declared start.
func (run *chaosRun) converge() *chaosFailure {
	ctx, cancel := context.WithTimeout(run.t.Context(), chaosStepBudget)
	defer cancel()
	if err := run.model.heal(ctx, run.tg); err != nil {
		run.t.Fatalf("removing keys of other types: %v", err)
	}
	final := chaosStep{N: 0, Kind: stepConverge, Parallelism: 10, MaxRetries: 3}
	if f := run.cliStep(ctx, final, rand.New(rand.NewPCG(0, 0))); f != nil { //nolint:gosec // no choice is drawn
		return f
	}
	fail := func(invariant string, problems ...string) *chaosFailure {
		return &chaosFailure{Invariant: invariant, Problems: problems}
	}
	run.stats.Checks["a fault-free apply converges"]++
	if res := run.last; res.err != nil {
		return fail("a fault-free apply converges", fmt.Sprintf("the fault-free apply failed: %v\n%s", res.err, res.output()))
	}
	plan := run.cli.plan()
	run.stats.Checks["the next plan is empty"]++
	if plan.err != nil || plan.changes {
		return fail("the next plan is empty", fmt.Sprintf("plan after convergence: err %v, changes %v\n%s", plan.err, plan.changes, plan.output()))
	}
	state, err := readChaosState(run.cli.dir)
	acctest.MustDo(run.t, err)
	snap, err := readChaosServer(ctx, run.tg)
	acctest.MustDo(run.t, err)
	var problems []string
	for _, r := range run.declared {
		run.stats.Checks["every declared group is on the server and in state"]++
		e, ok := state[r.address()]
		switch {
		case !snap.has(r.Stream, r.Name):
			problems = append(problems, fmt.Sprintf("%s: group %q of %q is not on the server", r.address(), r.Name, r.Stream))
		case !ok || e.Stream != r.Stream || e.Name != r.Name || e.Start == nil || *e.Start != r.Start:
			problems = append(problems, fmt.Sprintf("%s: state holds %+v, want group %q of %q with group_start %q", r.address(), e, r.Name, r.Stream, r.Start))
		}
	}
	if len(problems) > 0 {
		return fail("every declared group is on the server and in state", problems...)
	}
	return nil
}

// count adds the step's faults to the stats: drawn by kind, and acted by kind.
func (run *chaosRun) count(s chaosStep, log []faultproxy.Record, refused int) {
	for _, f := range s.Faults {
		run.stats.Faults[f.Action.String()]++
	}
	for _, r := range log {
		if r.Action != 0 {
			run.stats.Acted[r.Action.String()]++
		}
		if redirected(r) && r.Delivered {
			word, _, _ := strings.Cut(r.Reply, " ")
			run.stats.Slots[word+" replies to the provider"]++
		}
	}
	if refused > 0 {
		run.stats.Acted["Refuse"] += refused
	}
}

// met counts what the step met of what a normal run must meet: a plan of several declared
// streams the server did not hold, an import of a group the server held (by the CLI or by a
// block, its ID holding a "/" or not), and a refused connection the step got past (it exited 0).
func (run *chaosRun) met(o *chaosObservation, imp *chaosImport, refused int) {
	absent := map[string]bool{}
	for _, r := range o.declared {
		if _, held := o.server.keys[r.Stream]; !held {
			absent[r.Stream] = true
		}
	}
	if len(absent) >= 2 && o.kind != stepImportCLI && o.kind != stepApplySaved {
		run.stats.Met["a plan with two or more absent streams"]++
	}
	if imp != nil {
		if k := o.server.keys[imp.To.Stream]; k != nil && k.Groups != nil {
			if _, held := k.Groups[imp.To.Name]; held {
				run.stats.Met["an import ("+o.kind.String()+") of a group the server held"]++
				if strings.Count(chaosImportID(imp.To.Stream, imp.To.Name), "/") > 1 {
					run.stats.Met["an import of a group the server held, its ID holding more than one \"/\""]++
				}
			}
		}
	}
	if refused > 0 && o.res.err == nil {
		run.stats.Met[fmt.Sprintf("a refused connection, then success (max_retries %d)", o.step.MaxRetries)]++
	}
}

// detached is 1 for a step that took the replica off the primary (a fault, though no proxy's).
func detached(s chaosStep) int {
	if s.Detach {
		return 1
	}
	return 0
}

func actedIn(log []faultproxy.Record) int {
	n := 0
	for _, r := range log {
		if r.Action != 0 {
			n++
		}
	}
	return n
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > 6000 {
		s = s[:2000] + "\n...\n" + s[len(s)-4000:]
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
