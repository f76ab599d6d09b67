package systemtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// Reshard steps: in Cluster mode, a share of the CLI steps move the slot of one of the
// campaign's streams to another master, so that the provider's commands meet MOVED (the slot
// moved after the provider loaded its slot map) and ASK (the slot half-way between two nodes).
// The data moves with the slot, groups and all, so the model, which knows keys and not nodes,
// stays as it is; what changes is where the campaign's own clients find each key
// (chaosSlots.admin).
//
// Each provider process loads the slot map once, at its first command, so a move between two
// CLI steps would only ever meet a fresh map. A complete move therefore happens during the
// step's command: an event of the proxies (faultproxy.Fault.Before) on the step's first
// command on the slot's stream, which comes after the map was loaded, moves the slot while
// the proxy holds that command, and the provider, its map naming the old owner, meets MOVED.
// The command's key is the trigger, not a clock, so a replay moves at the same command. A
// complete move is drawn only on a step with no fault of its own (and no event: duringSteps).
// A half-way move (IMPORTING on the target, MIGRATING on the source, the stream moved or not)
// is begun before the command of any step, faults and all, stays open across the steps after
// it, and is finished during the command of the next reshard step that moves (or of the final
// convergence).

// reshardKind is what a reshard step does to a slot.
type reshardKind int

const (
	reshardMove   reshardKind = iota + 1 // the valkey-cli way: IMPORTING, MIGRATING, the keys MIGRATEd, SETSLOT NODE on every primary
	reshardAtomic                        // CLUSTER MIGRATESLOTS, waiting until it completes (Valkey 9 and later; else the valkey-cli way)
	reshardBegin                         // IMPORTING and MIGRATING, the stream moved or not, left so until a later move finishes it
)

var reshardNames = map[reshardKind]string{reshardMove: "move", reshardAtomic: "atomic move", reshardBegin: "half-way move"}

// chaosReshard is a step's reshard: what it does, and the pick that chooses the slot and the
// master it goes to when the step runs.
type chaosReshard struct {
	Kind reshardKind
	Pick uint64
}

// chaosReshardShare is the percentage of a Cluster campaign's CLI steps that reshard.
const chaosReshardShare = 25

// reshardSteps draws the reshard steps of a Cluster campaign, from a stream of their own, after
// every other draw, so that every other draw of the seed (and of every standalone and
// replicated seed) stays as it was.
func reshardSteps(steps []chaosStep, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x72_65_73_68_61_72_64)) //nolint:gosec // a reproducible test sequence
	for i := range steps {
		roll, kind, pick := rng.IntN(100), []reshardKind{reshardMove, reshardAtomic}[rng.IntN(2)], rng.Uint64()
		if k := steps[i].Kind; roll >= chaosReshardShare || k == stepOutOfBand || k == stepRestart {
			continue
		}
		if len(steps[i].Faults) > 0 {
			kind = reshardBegin // a move's trigger must be the step's only fault: with faults, a half-way move
		}
		steps[i].Reshard = chaosReshard{Kind: kind, Pick: pick}
	}
}

// chaosSlots is where the campaign's keys live in a Cluster target: the owner of each slot,
// and the migration left half-way, if any. Only reshard steps move slots.
type chaosSlots struct {
	pc        *faultproxy.ProxiedCluster
	admins    map[*valkeytest.Server]*redis.Client
	asking    map[*valkeytest.Server]*redis.Client // one connection each, ASKING before every command
	owner     map[int]*valkeytest.Server
	migration *valkeytest.Migration
	migrating string // the stream of migration's slot
	atomic    bool   // the servers have CLUSTER MIGRATESLOTS
}

func newChaosSlots(pc *faultproxy.ProxiedCluster) (*chaosSlots, error) {
	cs := &chaosSlots{pc: pc, admins: map[*valkeytest.Server]*redis.Client{}, asking: map[*valkeytest.Server]*redis.Client{},
		owner: map[int]*valkeytest.Server{}}
	for i, s := range pc.Nodes {
		pc.Announces(s, pc.Proxies[i].Addr())
		cs.admins[s] = s.Client()
		cs.asking[s] = redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true, PoolSize: 1})
		cs.asking[s].AddHook(askingHook{})
	}
	ctx := context.Background()
	for _, stream := range chaosStreams {
		node, err := pc.NodeOf(ctx, valkey.HashSlot(stream))
		if err != nil {
			return cs, err
		}
		cs.owner[valkey.HashSlot(stream)] = node
	}
	info, err := valkeytest.Info(ctx, cs.admins[pc.Nodes[0]], "server")
	if err != nil {
		return cs, err
	}
	v, err := version.NewVersion(info["valkey_version"])
	cs.atomic = err == nil && v.GreaterThanOrEqual(version.Must(version.NewVersion("9.0.0")))
	return cs, nil
}

// admin is a direct client that reaches stream where it lives now: its slot's owner, or during
// a migration the source while it holds the key, else the target after ASKING.
func (cs *chaosSlots) admin(stream string) redis.Cmdable {
	slot := valkey.HashSlot(stream)
	if m := cs.migration; m != nil && m.Slot == slot {
		if err := cs.admins[m.Source].Exists(context.Background(), stream).Err(); err != nil && strings.HasPrefix(err.Error(), "ASK ") {
			return cs.asking[m.Target]
		}
		return cs.admins[m.Source]
	}
	return cs.admins[cs.owner[slot]]
}

func (cs *chaosSlots) close() {
	for _, m := range []map[*valkeytest.Server]*redis.Client{cs.admins, cs.asking} {
		for _, c := range m {
			_ = c.Close()
		}
	}
}

// askingHook sends ASKING before every command of a client of one connection, so that the
// target of a migration serves the keys it imports.
type askingHook struct{}

func (askingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (askingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := next(ctx, redis.NewStatusCmd(ctx, "ASKING")); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (askingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// chaosMove is a move to run during a step's command: an event (faultproxy.Fault.Before) on
// the first command of the step on the moved slot's stream, which reaches the proxy only after
// the provider loaded its slot map (a cluster client routes nothing before). The proxy holds
// that command while the slot moves, then passes it on to the old owner, which answers MOVED.
// No clock decides anything: the command, by its key, is the trigger.
type chaosMove struct {
	stream  string           // the slot's stream: its first command triggers the move
	trigger faultproxy.Fault // injected into proxy alone
	proxy   *faultproxy.Proxy
	run     func() (string, error)

	mu    sync.Mutex
	fired bool
	note  string
	err   error
}

// reshardBefore does the step's reshard, or what of it comes before the command: a half-way
// move now, or the move to run during the command (nil when there is none). A whole move
// finishes the migration left half-way, if there is one, during the command; an atomic move
// (or a half-way one) finishes it before, then moves its own slot. The convergence finishes a
// migration left half-way.
func (run *chaosRun) reshardBefore(ctx context.Context, s chaosStep) (*chaosMove, []string) {
	cs := run.tg.slots
	r := s.Reshard
	if cs == nil || r.Kind == 0 && (s.Kind != stepConverge || cs.migration == nil) {
		return nil, nil
	}
	run.stats.Slots["reshard steps"]++
	rng := rand.New(rand.NewPCG(r.Pick, uint64(s.N))) //nolint:gosec // a reproducible test sequence
	var notes []string
	if r.Kind == reshardBegin || r.Kind == reshardAtomic {
		if cs.migration != nil { // one migration at a time: the open one ends first
			note, err := run.finish(ctx)
			run.mustReshard(s, err)
			notes = append(notes, note)
		}
	}
	if r.Kind == reshardBegin {
		note, err := run.begin(ctx, rng)
		run.mustReshard(s, err)
		return nil, append(notes, note)
	}
	m := &chaosMove{}
	var source *valkeytest.Server // the slot's owner in the map the provider loads
	if cs.migration != nil {
		m.stream, source = cs.migrating, cs.migration.Source
		m.run = func() (string, error) { return run.finish(ctx) }
	} else {
		stream, slot, dst := run.reshardSlot(rng)
		m.stream, source = stream, cs.owner[slot]
		m.run = func() (string, error) { return run.move(ctx, stream, slot, dst, r.Kind == reshardAtomic) }
	}
	// The trigger goes to the source's proxy alone: the one the provider's first command on the
	// stream reaches, and one no traffic of the move itself passes (atomic migration sends the
	// slot's commands through the target's proxy, with no replies an event could wait for).
	m.trigger = faultproxy.Fault{Key: m.stream, Times: 1, Before: m.fire}
	for i, n := range cs.pc.Nodes {
		if n == source {
			m.proxy = cs.pc.Proxies[i]
		}
	}
	return m, append(notes, "reshard: a slot moves right before the command's first command on "+m.stream)
}

func (m *chaosMove) fire() {
	m.mu.Lock()
	if m.fired {
		m.mu.Unlock()
		return
	}
	m.fired = true
	m.mu.Unlock()
	note, err := m.run()
	m.mu.Lock()
	m.note, m.err = note+", during the command (right before its first command on "+m.stream+")", err
	m.mu.Unlock()
}

// wait ends the move: it ran during the command, or runs now, when the command sent nothing
// on the stream.
func (m *chaosMove) wait() (string, error) {
	m.mu.Lock()
	fired := m.fired
	m.mu.Unlock()
	if !fired {
		note, err := m.run()
		return note + ", after the command, which sent nothing on " + m.stream, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.note, m.err
}

func (run *chaosRun) mustReshard(s chaosStep, err error) {
	if err != nil {
		run.t.Fatalf("%s: moving a slot: %v", s, err)
	}
}

// reshardSlot picks the slot to move, most often one of a declared stream, and the master it
// goes to.
func (run *chaosRun) reshardSlot(rng *rand.Rand) (string, int, *valkeytest.Server) {
	cs := run.tg.slots
	stream := chaosStreams[rng.IntN(len(chaosStreams))]
	if len(run.declared) > 0 && rng.IntN(3) != 0 {
		stream = run.declared[rng.IntN(len(run.declared))].Stream
	}
	slot := valkey.HashSlot(stream)
	var others []*valkeytest.Server
	for _, s := range cs.pc.Nodes {
		if s != cs.owner[slot] {
			others = append(others, s)
		}
	}
	return stream, slot, others[rng.IntN(len(others))]
}

// move moves a slot whole: with CLUSTER MIGRATESLOTS when atomic is asked and the servers have
// it, else the valkey-cli way.
func (run *chaosRun) move(ctx context.Context, stream string, slot int, dst *valkeytest.Server, atomic bool) (string, error) {
	cs := run.tg.slots
	from := cs.owner[slot].Addr()
	how := "the valkey-cli way"
	if atomic && cs.atomic {
		how = "with CLUSTER MIGRATESLOTS"
		if err := cs.pc.MigrateSlotAtomically(ctx, slot, dst); err != nil {
			return "", err
		}
		if err := cs.pc.WaitOwner(ctx, slot, dst, 30*time.Second); err != nil {
			return "", err
		}
		run.stats.Slots["moved with CLUSTER MIGRATESLOTS"]++
	} else {
		if atomic {
			how += " (the server has no CLUSTER MIGRATESLOTS)"
		}
		if err := cs.pc.MigrateSlot(ctx, slot, dst); err != nil {
			return "", err
		}
		run.stats.Slots["moved the valkey-cli way"]++
	}
	cs.owner[slot] = dst
	return fmt.Sprintf("slot %d (%s) moved from %s to %s %s", slot, stream, from, dst.Addr(), how), nil
}

// begin leaves a slot half-way: IMPORTING on the target, MIGRATING on the source, and its
// stream, if there is one, moved to the target or left on the source.
func (run *chaosRun) begin(ctx context.Context, rng *rand.Rand) (string, error) {
	cs := run.tg.slots
	stream, slot, dst := run.reshardSlot(rng)
	m, err := cs.pc.BeginMigration(ctx, slot, dst)
	if err != nil {
		return "", err
	}
	cs.migration, cs.migrating = m, stream
	run.stats.Slots["half-way moves begun"]++
	what := "the stream does not exist" // the source answers ASK for it
	n, err := cs.admins[m.Source].Exists(ctx, stream).Result()
	switch {
	case err != nil && !strings.HasPrefix(err.Error(), "ASK "):
		return "", err
	case n == 1 && rng.IntN(2) == 0:
		if err := m.Move(ctx, 0, stream); err != nil {
			return "", err
		}
		what = "the stream moved to the target"
	case n == 1:
		what = "the stream left on the source"
	}
	return fmt.Sprintf("slot %d (%s) half-way from %s to %s: %s", slot, stream, m.Source.Addr(), dst.Addr(), what), nil
}

// finish completes the migration left half-way, the valkey-cli way.
func (run *chaosRun) finish(ctx context.Context) (string, error) {
	cs := run.tg.slots
	m := cs.migration
	if err := m.Finish(ctx); err != nil {
		return "", err
	}
	cs.owner[m.Slot], cs.migration = m.Target, nil
	run.stats.Slots["half-way moves finished"]++
	return fmt.Sprintf("slot %d's half-way move from %s to %s finished", m.Slot, m.Source.Addr(), m.Target.Addr()), nil
}

// redirected tells whether the server answered r with a redirect (-MOVED, -ASK): the node does
// not serve the key, and the command did not run there.
//
// Each proxy counts its own matches of a fault, so a create that one node redirects and the
// node it names runs meets a Times=1 fault on its group twice: once where it was redirected
// and once where it ran. The rule: a redirected create did not run (the model, and "at most
// once per apply", count only the attempt that could run), but its reply is still one the
// provider waits for: dropped, cut, never answered or late there, the provider never learns
// of the redirect, cannot know that nothing ran, and must report Outcome Unknown, which the
// outcome invariant demands since it judges every attempt of the create.
func redirected(r faultproxy.Record) bool {
	return r.Ran && (strings.HasPrefix(r.Reply, "-MOVED ") || strings.HasPrefix(r.Reply, "-ASK "))
}

// serverConn tells whether a proxy's connection was opened by a node, not the provider: atomic
// slot migration (CLUSTER SYNCSLOTS) sends the slot's keys to the target through the address
// it announces, its proxy.
func serverConn(first faultproxy.Record) bool { return first.Command == "CLUSTER SYNCSLOTS" }

// TestChaosModel_redirectedCreateDidNotRun: the model's rule for redirects, in its own terms.
// A create the source answered -ASK (or -MOVED) did not run there, and the one the target ran
// after ASKING is the group's only create of the step: the model records it once, with the
// target's reply, and "at most once per apply" holds. A redirect whose follow-up never came
// leaves nothing, even if its reply was dropped; and two creates that both ran still break
// "at most once".
func TestChaosModel_redirectedCreateDidNotRun(t *testing.T) {
	const stream, group = "emq:{b}:stream", "billing"
	create := func(conn int64, reply string) faultproxy.Record {
		return faultproxy.Record{Conn: conn, Command: "XGROUP CREATE", Args: []string{stream, group, "0", "MKSTREAM"}, Key: stream,
			Forwarded: true, Ran: true, Reply: reply, Delivered: true}
	}
	ask := create(1, "-ASK 3300 127.0.0.1:7001")
	asking := faultproxy.Record{Conn: 2, Command: "ASKING", Forwarded: true, Ran: true, Reply: "+OK", Delivered: true}
	ran := create(2, "+OK")
	empty := newChaosModel()

	// The target's proxy is listed first, as when it comes first among the proxies.
	m := newChaosModel()
	if problems, _ := m.applyCreates([]faultproxy.Record{asking, ran, ask}, empty, 4, nil); len(problems) > 0 {
		t.Fatalf("a create redirected, then run by the target: %v", problems)
	}
	if g, ok := m.group(stream, group); !ok || g.By != "provider" || g.ID != "0" || g.Step != 4 {
		t.Fatalf("the model holds %+v (%v) after the target ran the create; want the provider's, ID 0, step 4", g, ok)
	}
	o := &chaosObservation{log: []faultproxy.Record{ran, ask}, res: cliResult{command: "apply"}}
	if problems, _ := checkCreateOnce(o); len(problems) > 0 {
		t.Errorf("a redirected create and its follow-up count as two creates: %v", problems)
	}
	if last := lastRun([]faultproxy.Record{ran, ask}); last.Reply != "+OK" {
		t.Errorf("the create that ran is the one answered %q; want +OK", last.Reply)
	}

	lost := create(1, "-MOVED 3300 127.0.0.1:7002")
	lost.Action, lost.Delivered = faultproxy.DropReply, false
	m = newChaosModel()
	if problems, _ := m.applyCreates([]faultproxy.Record{lost}, empty, 5, nil); len(problems) > 0 || m.has(stream, group) {
		t.Errorf("a redirect whose reply was dropped: problems %v, group in the model %v; want none and no group", problems, m.has(stream, group))
	}
	if !lateReply(lost) {
		t.Error("a dropped redirect is not a lost reply: the provider would be allowed to report a known outcome")
	}

	o = &chaosObservation{log: []faultproxy.Record{create(1, "+OK"), create(2, "-BUSYGROUP Consumer Group name already exists")}, res: cliResult{command: "apply"}}
	if problems, _ := checkCreateOnce(o); len(problems) == 0 {
		t.Error("two creates that both ran pass \"at most once per apply\"")
	}
}
