package provider

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
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
// step's command: a DelayReply on the first CLUSTER SLOTS holds the map the server gave back
// (chaosHoldDelay) while the move runs, and the provider then sends the moved slot's commands
// to the old owner, which answers MOVED. So that the hold's hit is the only one the step can
// have (the trigger reads the proxies' hit counts), a complete move is drawn only on a step
// with no fault of its own. A half-way move (IMPORTING on the target, MIGRATING on the source,
// the stream moved or not) is begun before the command of any step, faults and all, stays open
// across the steps after it, and is finished during the command of the next reshard step that
// moves (or of the final convergence).

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

// chaosHoldDelay is how long a reshard step holds the reply to the first CLUSTER SLOTS of its
// command while the slot moves: far below command_timeout, so that the provider waits it out,
// and far above what a move of one small slot takes.
const chaosHoldDelay = chaosCommandTimeout / 2

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
	atomic    bool // the servers have CLUSTER MIGRATESLOTS
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

// chaosMove is a move to run during a step's command, once the hold has acted on the first
// CLUSTER SLOTS (or after the command, when no slot map was loaded).
type chaosMove struct {
	hold faultproxy.Fault
	stop chan struct{}
	done chan string
	run  func() (string, error)
	err  error
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
	m := &chaosMove{hold: faultproxy.Fault{Command: "CLUSTER SLOTS", Action: faultproxy.DelayReply, Delay: chaosHoldDelay, Times: 1},
		stop: make(chan struct{}), done: make(chan string, 1)}
	m.run = func() (string, error) {
		if cs.migration != nil {
			return run.finish(ctx)
		}
		return run.move(ctx, rng, r.Kind == reshardAtomic)
	}
	return m, append(notes, "reshard: the first CLUSTER SLOTS held "+chaosHoldDelay.String()+" while a slot moves")
}

// start watches the proxies, once the step's faults (the hold among them) are in, and runs
// the move when the hold has acted.
func (m *chaosMove) start(proxies []*faultproxy.Proxy) { go m.watch(proxies) }

func (m *chaosMove) watch(proxies []*faultproxy.Proxy) {
	for {
		for _, p := range proxies {
			if p.Hits() > 0 {
				started := time.Now()
				note, err := m.run()
				m.err = err
				took := time.Since(started)
				note = fmt.Sprintf("%s, during the command (%v, the slot map held %v)", note, took.Round(time.Millisecond), chaosHoldDelay)
				if took > chaosHoldDelay { // no verdict depends on it (the model reads every redirect), only which commands met MOVED
					note += "; the move outlasted the hold, so the command may have met it half-done"
				}
				m.done <- note
				return
			}
		}
		select {
		case <-m.stop:
			m.done <- ""
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// wait ends the move: it ran during the command, or runs now.
func (m *chaosMove) wait() (string, error) {
	close(m.stop)
	if note := <-m.done; note != "" {
		return note, m.err
	}
	note, err := m.run()
	return note + ", after the command (it loaded no slot map)", err
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
func (run *chaosRun) move(ctx context.Context, rng *rand.Rand, atomic bool) (string, error) {
	cs := run.tg.slots
	stream, slot, dst := run.reshardSlot(rng)
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
	cs.migration = m
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
