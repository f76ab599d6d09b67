package systemtest

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
)

// Events during a CLI step: the server restarts, or another client changes the data, right
// before one command of the CLI's run reaches the server, while the provider waits for its
// reply. The proxy runs the event (faultproxy.Fault.Before) when the command arrives, and only
// then passes the command on. The command is chosen by what it is (an XGROUP CREATE of one
// group, the first XINFO GROUPS or TYPE of one stream), never by when it comes, so a replay
// strikes the same command. A step with an event runs at -parallelism=1, so that nothing else
// of the CLI is in flight when it strikes.

// duringKind is what an event does, and before which command.
type duringKind int

const (
	duringRestartCreate  duringKind = iota + 1 // the server (the key's node) restarts right before an XGROUP CREATE
	duringConsumerCreate                       // a consumer creates the same group right before the provider's XGROUP CREATE
	duringSetCreate                            // another client SETs the key to a string right before the XGROUP CREATE
	duringRestartRead                          // the server restarts right before a read (XINFO GROUPS, or TYPE)
	duringDelRead                              // another client DELs the stream right before a read
	duringDestroyRead                          // another client destroys a group of the stream right before a read
)

var duringNames = map[duringKind]string{
	duringRestartCreate: "restart before XGROUP CREATE", duringConsumerCreate: "consumer's XGROUP CREATE before XGROUP CREATE",
	duringSetCreate: "SET before XGROUP CREATE", duringRestartRead: "restart before a read",
	duringDelRead: "DEL before a read", duringDestroyRead: "XGROUP DESTROY before a read",
}

func (k duringKind) String() string { return duringNames[k] }

func (k duringKind) beforeCreate() bool {
	return k == duringRestartCreate || k == duringConsumerCreate || k == duringSetCreate
}

func (k duringKind) restarts() bool { return k == duringRestartCreate || k == duringRestartRead }

// chaosDuring is a step's event as drawn: its kind, and the pick that resolves what it strikes
// when the step runs (like the step's faults on XGROUP CREATE, it depends on what the step
// declares then).
type chaosDuring struct {
	Kind  duringKind
	Pick  uint64
	Alone bool // the step's faults were dropped for it
}

func (d *chaosDuring) String() string {
	if d.Alone {
		return "during: " + d.Kind.String() + ", alone"
	}
	return "during: " + d.Kind.String()
}

// chaosDuringShare is the percentage of CLI steps that get an event.
const chaosDuringShare = 25

// duringSteps gives a share of the CLI steps (chaosDuringShare) an event: an apply, an
// apply-saved or an import block one before a create three times in four, another CLI step
// (which creates nothing) one before a read. Drawn from a stream of their own, after every
// other draw, so that every other draw of every seed stays as it was; the step's
// -parallelism becomes 1, and half of the steps whose event strikes a create drop their faults.
func duringSteps(steps []chaosStep, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x64_75_72_69_6e_67)) //nolint:gosec // a reproducible test sequence
	for i := range steps {
		roll, kind, pick := rng.IntN(100), duringKind(1+rng.IntN(len(duringNames))), rng.Uint64()
		s := &steps[i]
		if roll >= chaosDuringShare || s.Kind == stepOutOfBand || s.Kind == stepRestart || s.Reshard.Kind != 0 {
			continue
		}
		creates := s.Kind == stepApply || s.Kind == stepApplySaved || s.Kind == stepImportBlock
		switch {
		case !creates && kind.beforeCreate():
			kind += duringRestartRead - duringRestartCreate // the read kind in the same place
		case creates && !kind.beforeCreate() && roll%2 == 0:
			kind -= duringRestartRead - duringRestartCreate // three in four of an apply's events strike a create
		}
		s.During, s.Parallelism = &chaosDuring{Kind: kind, Pick: pick}, 1
		if kind.beforeCreate() && pick%2 == 0 {
			// Half of them alone: a fault that fails the apply before its creates (a lost read
			// of its refresh, a refused connection) would leave the event nothing to strike.
			s.Faults, s.During.Alone = nil, true
		}
	}
}

// duringEvent is a step's event as it runs: the fault that carries it to the proxies, and what
// it did. The proxy runs fire on its own goroutine; close, after the CLI's run, waits for it.
type duringEvent struct {
	kind   duringKind
	fault  faultproxy.Fault
	change chaosChange // for a change by another client
	run    *chaosRun
	ctx    context.Context
	rng    *rand.Rand // a restart's SIGKILL or SHUTDOWN

	mu        sync.Mutex
	closed    bool
	fired     bool
	did       string
	result    string // the server's answer to the change (chaosChange.do)
	err       error
	applied   bool // the model took it (at)
	restarted bool // the model took a restart: a server may refuse what comes after
}

// resolveDuring chooses what the step's event strikes, against the state before the step and
// the configuration it runs with: for an event before a create, a group the step is to create
// (declared, not in state with its resource, not imported, on a stream or no key), or any
// declared one; for one before a read, a stream a group in state or a declared one names, read
// with XINFO GROUPS, or with TYPE when the key holds another type (which the provider names
// after its WRONGTYPE).
func (run *chaosRun) resolveDuring(ctx context.Context, s chaosStep, state map[string]chaosEntry, imported *chaosImport) *duringEvent {
	rng := rand.New(rand.NewPCG(s.During.Pick, uint64(s.N))) //nolint:gosec // a reproducible test sequence
	ev := &duringEvent{kind: s.During.Kind, run: run, ctx: ctx, rng: rng}
	if ev.kind.beforeCreate() {
		var pool []chaosResource
		for _, r := range run.declared {
			e, held := state[r.address()]
			k := run.model.keys[r.Stream]
			// Not the group an import block imports (it is not created), nor one on a key of
			// another type (the plan fails on it, before any create).
			if (!held || e.group() != [2]string{r.Stream, r.Name}) && (imported == nil || imported.To.address() != r.address()) &&
				(k == nil || k.Type == "stream") {
				pool = append(pool, r)
			}
		}
		if len(pool) == 0 {
			pool = run.declared
		}
		if ev.kind == duringSetCreate {
			// A SET replaces the whole key: a create of another group on it would meet a
			// string or lose its group by whether Terraform ran it before or after the struck
			// one, an order Terraform does not fix even at -parallelism=1. Only a group alone on
			// its stream among all the declared ones is struck, so that a replay meets what the
			// first run met: a group state holds may be created too (its group_start changed,
			// or the refresh found it gone).
			pool = slices.DeleteFunc(slices.Clone(pool), func(r chaosResource) bool {
				return slices.ContainsFunc(run.declared, func(o chaosResource) bool { return o.Stream == r.Stream && o.Name != r.Name })
			})
		}
		r := chaosResource{Stream: chaosStreams[rng.IntN(len(chaosStreams))], Name: chaosNames[rng.IntN(len(chaosNames))]}
		if len(pool) > 0 {
			r = pool[rng.IntN(len(pool))]
		}
		ev.fault = faultproxy.Fault{Command: "XGROUP CREATE", Key: r.Stream, Group: r.Name, Times: 1}
		switch ev.kind {
		case duringConsumerCreate:
			ev.change = chaosChange{Kind: "create", Stream: r.Stream, Name: r.Name, ID: []string{"$", "0"}[rng.IntN(2)]}
		case duringSetCreate:
			ev.change = chaosChange{Kind: "set", Stream: r.Stream}
		}
	} else {
		streams := map[string][]string{} // stream -> the groups state and the configuration name on it
		for _, addr := range slices.Sorted(maps.Keys(state)) {
			streams[state[addr].Stream] = append(streams[state[addr].Stream], state[addr].Name)
		}
		for _, r := range run.declared {
			streams[r.Stream] = append(streams[r.Stream], r.Name)
		}
		pool := slices.Sorted(maps.Keys(streams))
		stream := chaosStreams[rng.IntN(len(chaosStreams))]
		if len(pool) > 0 {
			stream = pool[rng.IntN(len(pool))]
		}
		command := "XINFO GROUPS"
		if k := run.model.keys[stream]; k != nil && k.Type != "stream" {
			command = "TYPE"
		}
		ev.fault = faultproxy.Fault{Command: command, Key: stream, Times: 1}
		switch ev.kind {
		case duringDelRead:
			ev.change = chaosChange{Kind: "del", Stream: stream}
		case duringDestroyRead:
			names := streams[stream]
			name := chaosNames[rng.IntN(len(chaosNames))]
			if len(names) > 0 {
				name = names[rng.IntN(len(names))]
			}
			ev.change = chaosChange{Kind: "destroy", Stream: stream, Name: name}
		}
	}
	ev.fault.Before = ev.fire
	return ev
}

// describe is the event as a reader of a failure wants it.
func (ev *duringEvent) describe() string {
	what := ev.fault.Command + " on " + ev.fault.Key
	if ev.fault.Group != "" {
		what += " group " + ev.fault.Group
	}
	if ev.kind.restarts() {
		return fmt.Sprintf("during: the server restarts right before %s", what)
	}
	return fmt.Sprintf("during: another client runs %s right before %s", ev.change, what)
}

// fire is the event, run by the proxy right before the command it strikes is passed on.
func (ev *duringEvent) fire() {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.closed || ev.fired {
		return
	}
	ev.fired = true
	if ev.kind.restarts() {
		ev.did, ev.err = ev.run.tg.restart(ev.rng, ev.fault.Key)
		return
	}
	ev.result, ev.err = ev.change.do(ev.ctx, ev.run.tg)
	ev.did = "ran " + ev.change.String()
}

// close ends the event: after the CLI's run, it waits for an event under way, and no event
// starts after it. It returns what the event did ("" if it did not fire), and its error.
func (ev *duringEvent) close() (string, error) {
	if ev == nil {
		return "", nil
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.closed = true
	return ev.did, ev.err
}

// at is the model taking the event, at the place of the command r it struck (the log's first
// record with Before): another client's change is made in the model before r, which then runs
// as it would; after a restart, r never ran (its connection led to the server that went away),
// and the model says so if the proxy saw a reply. The step's reads after the restart may meet
// a server that is not serving yet (refusedWhileRestarting).
func (ev *duringEvent) at(m *chaosModel, r faultproxy.Record, step int) (ran bool, problem string) {
	if ev == nil || !ev.fired || ev.applied {
		return true, ""
	}
	ev.applied = true
	if ev.kind.restarts() {
		ev.restarted = true
		if r.Ran {
			return false, fmt.Sprintf("%s %v, struck by a restart before it reached the server, was answered %q; the model expected no reply from the server that went away",
				r.Command, r.Args, r.Reply)
		}
		return false, ""
	}
	if _, err := m.applyChange(ev.change, ev.result, step); err != nil {
		return true, err.Error()
	}
	return true, ""
}

// refusedWhileRestarting tells whether reply (its first word) is what a server that restarted
// in the step answers until it serves again: LOADING while it loads its AOF, CLUSTERDOWN while
// a restarted Cluster node waits to rejoin (its state turns ok only seconds after it starts).
// A command so refused did not run.
func (ev *duringEvent) refusedWhileRestarting(reply string) bool {
	return ev != nil && ev.restarted && (reply == "-LOADING" || reply == "-CLUSTERDOWN")
}

// struck is how many commands the proxies saw the event strike (their log's Before).
func struck(log []faultproxy.Record) int {
	n := 0
	for _, r := range log {
		n += r.Before
	}
	return n
}

// countDuring adds the step's event to the stats: drawn by kind; fired, and the command it
// struck, as the proxies' log shows it (the CLI's command held at the proxy while it ran).
func (run *chaosRun) countDuring(ev *duringEvent, log []faultproxy.Record) {
	if ev == nil {
		return
	}
	run.stats.During[ev.kind.String()]++
	for _, r := range log {
		if r.Before > 0 {
			run.stats.DuringStruck[ev.kind.String()+": "+r.Command] += r.Before
		}
	}
}

// TestChaosSteps_EventsLeaveEveryOtherDrawAsItWas: the events come from a stream of their own,
// so a seed's steps are what they were without them, but for what an event changes on its own
// step (-parallelism 1, and the faults of a step whose event strikes a create alone), and a
// share of the CLI steps, no out-of-band or restart step, gets one.
func TestChaosSteps_EventsLeaveEveryOtherDrawAsItWas(t *testing.T) {
	for _, mode := range []chaosMode{chaosStandalone, chaosCluster, chaosReplicated} {
		events, cliSteps := 0, 0
		for seed := int64(1); seed <= 20; seed++ {
			plain, with := drawSteps(mode, seed, 60), chaosSteps(mode, seed, 60)
			for i, s := range with {
				want := plain[i]
				if s.Kind != stepOutOfBand && s.Kind != stepRestart {
					cliSteps++
				}
				if s.During != nil {
					events++
					if s.Kind == stepOutOfBand || s.Kind == stepRestart {
						t.Errorf("%s seed %d %s has an event, but sends nothing through the CLI", mode, seed, s)
					}
					want.During, want.Parallelism = s.During, 1
					if s.During.Alone {
						want.Faults = nil
					}
				}
				if !reflect.DeepEqual(s, want) {
					t.Errorf("%s seed %d: %s; without events it was %s", mode, seed, s, want)
				}
			}
		}
		if share := 100 * events / cliSteps; share < chaosDuringShare-8 || share > chaosDuringShare+8 {
			t.Errorf("%s: %d events on %d CLI steps (%d%%); want about %d%%", mode, events, cliSteps, share, chaosDuringShare)
		}
	}
}
