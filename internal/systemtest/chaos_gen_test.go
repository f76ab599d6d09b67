package systemtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
)

// The campaign's generator: a seed gives one sequence of steps, each drawn on its own, so that
// any subsequence (what shrinking tries) is a valid campaign too. A step fixes its kind, its
// faults and its CLI settings when it is drawn; what it acts on (which group to add, which
// stream to delete) is chosen when it runs, from its own Pick, against the campaign's state
// then.

// chaosStreams are the campaign's stream keys: four hash tags, one on each master of a
// three-master cluster and one more ({a} and {d} share one), a "/" in one key for the import
// ID's escaping.
var chaosStreams = []string{"emq:{a}:stream", "emq:{b}:stream", "emq:{c}:stream", "emq:{d}:stream/main"}

// chaosNames are the group names the campaign declares; "team/search" has a "/" that the import
// ID writes %2F.
var chaosNames = []string{"billing", "audit", "shipping", "team/search", "g5"}

// stepKind is what a step does.
type stepKind int

const (
	stepPlan        stepKind = iota + 1 // terraform plan, sometimes saved with -out
	stepApply                           // edit the configuration (add, remove, change groups), then apply
	stepApplySaved                      // apply the saved plan (a plain apply when there is none to apply)
	stepRefresh                         // terraform refresh, or apply -refresh-only
	stepImportBlock                     // an import block (by ID or by identity), then apply
	stepImportCLI                       // terraform import ADDRESS ID
	stepDestroy                         // terraform destroy
	stepOutOfBand                       // another client changes the server
	stepRestart                         // the server (a cluster node) restarts, with its AOF
	stepConverge                        // the end: a fault-free apply of the configuration as it is
)

var stepNames = map[stepKind]string{
	stepPlan: "plan", stepApply: "apply", stepApplySaved: "apply-saved", stepRefresh: "refresh",
	stepImportBlock: "import-block", stepImportCLI: "import-cli", stepDestroy: "destroy",
	stepOutOfBand: "out-of-band", stepRestart: "restart", stepConverge: "converge",
}

func (k stepKind) String() string { return stepNames[k] }

// stepWeights draw the kinds, in parts of 100.
var stepWeights = []struct {
	kind   stepKind
	weight int
}{
	{stepApply, 30}, {stepPlan, 11}, {stepApplySaved, 5}, {stepRefresh, 10}, {stepImportBlock, 6},
	{stepImportCLI, 5}, {stepDestroy, 4}, {stepOutOfBand, 23}, {stepRestart, 6},
}

// chaosStep is one step of a campaign.
type chaosStep struct {
	N           int // its number in the seed's sequence, from 1
	Kind        stepKind
	Pick        uint64 // resolves the step's choices when it runs
	Faults      []faultproxy.Fault
	Parallelism int // the -parallelism of the step's command, 1 or 10 (the default); no fault depends on the order it allows
	MaxRetries  int // the provider's max_retries for this step
	// NoRefresh makes a plan or apply run with -refresh=false whatever the step's Pick says
	// (a slot-map step: slotMapSteps).
	NoRefresh bool
	// Detach takes the replica off the primary for the step's command (replicated mode:
	// waitSteps), so that no WAIT of it is acknowledged.
	Detach bool
	// Reshard moves a slot in the step (Cluster mode: reshardSteps); zero for none.
	Reshard chaosReshard
	// During is the restart or change by another client that strikes right before one
	// command of the step's CLI run (duringSteps), nil for none.
	During *chaosDuring
}

func (s chaosStep) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d: %s", s.N, s.Kind)
	if s.Kind != stepOutOfBand && s.Kind != stepRestart {
		fmt.Fprintf(&b, " (parallelism %d, max_retries %d", s.Parallelism, s.MaxRetries)
		if s.NoRefresh {
			b.WriteString(", -refresh=false")
		}
		if s.Detach {
			b.WriteString(", the replica detached")
		}
		if s.Reshard.Kind != 0 {
			b.WriteString(", reshard: " + reshardNames[s.Reshard.Kind])
		}
		if s.During != nil {
			b.WriteString(", " + s.During.String())
		}
		b.WriteString(")")
	}
	for _, f := range s.Faults {
		b.WriteString("; " + describeFault(f))
	}
	return b.String()
}

// describeFault is a fault as a reader of a failure wants it.
func describeFault(f faultproxy.Fault) string {
	what := f.Command
	if what == "" {
		what = "any command"
	}
	if f.Action == faultproxy.Refuse {
		what = "connection"
	}
	if f.Key != "" {
		what += " on " + f.Key
	}
	if f.Group != "" {
		what += " group " + f.Group
	}
	s := fmt.Sprintf("%s on %s", f.Action, what)
	if f.After > 0 {
		s += fmt.Sprintf(" after %d", f.After)
	}
	if f.Times > 0 {
		s += fmt.Sprintf(", %d time(s)", f.Times)
	} else {
		s += ", every time"
	}
	switch f.Action {
	case faultproxy.Answer:
		s += fmt.Sprintf(" (%q)", f.Reply)
	case faultproxy.DelayReply, faultproxy.Refuse:
		if f.Delay > 0 {
			s += fmt.Sprintf(" (%v)", f.Delay)
		}
	}
	return s
}

// chaosReplies are the error replies Answer injects: what a server in trouble says. Replies that
// would be lies about the data (BUSYGROUP, WRONGTYPE, "no such key", MOVED) are left out: a
// provider that believes them is right to.
var chaosReplies = []string{
	"LOADING Valkey is loading the dataset in memory",
	"OOM command not allowed when used memory > 'maxmemory'.",
	"READONLY You can't write against a read only replica.",
	"NOPERM User default has no permissions to run the 'xgroup|create' command",
	"ERR chaos: injected error",
	"CLUSTERDOWN The cluster is down",
	"TRYAGAIN Multiple keys request during rehashing of slot",
}

// chaosCommandTimeout is the provider's command_timeout (and dial_timeout) in the campaign.
const chaosCommandTimeout = time.Second

// chaosLateDelay is how long a late DelayReply holds a reply back: far past command_timeout,
// so that the fault, not the machine's speed, decides that the reply came too late. A short
// delay is at most chaosShortDelay, far below it (two of them in one round trip still are).
const (
	chaosLateDelay  = 5 * chaosCommandTimeout
	chaosShortDelay = 250 * time.Millisecond
)

// chaosSteps draws n steps from seed, for mode, and their events (duringSteps).
func chaosSteps(mode chaosMode, seed int64, n int) []chaosStep {
	steps := drawSteps(mode, seed, n)
	duringSteps(steps, seed)
	return steps
}

// drawSteps draws n steps from seed, for mode, with no events during them.
func drawSteps(mode chaosMode, seed int64, n int) []chaosStep {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x63_68_61_6f_73)) //nolint:gosec // a reproducible test sequence
	steps := make([]chaosStep, n)
	for i := range steps {
		s := chaosStep{N: i + 1, Pick: rng.Uint64(), Parallelism: 10, MaxRetries: []int{0, 1, 3}[rng.IntN(3)]}
		roll := rng.IntN(100)
		for _, w := range stepWeights {
			if roll -= w.weight; roll < 0 {
				s.Kind = w.kind
				break
			}
		}
		if rng.IntN(2) == 0 {
			s.Parallelism = 1
		}
		if s.Kind != stepOutOfBand && s.Kind != stepRestart {
			nFaults := 0
			switch roll := rng.IntN(100); {
			case roll < 30:
			case roll < 70:
				nFaults = 1
			case roll < 90:
				nFaults = 2
			default:
				nFaults = 3
			}
			for range nFaults {
				s.Faults = append(s.Faults, chaosFault(rng, mode))
			}
		}
		steps[i] = s
	}
	if mode == chaosCluster {
		slotMapSteps(steps, seed)
		reshardSteps(steps, seed)
	}
	if mode == chaosReplicated {
		waitSteps(steps, seed)
	}
	return steps
}

// waitSteps make a share of a replicated campaign's applies (chaosWaitShare) meet a WAIT that
// does not confirm: half of them the replica detached for the step, the others one more fault, on every WAIT of the
// step, that keeps its reply from the provider (dropped, cut, never answered, or late), or
// answers it with the server's refusal; or, as a control, a short delay that must still
// confirm. Drawn from a stream of their own, after every other draw, so that a replicated seed
// draws what the same standalone seed draws, and standalone and Cluster seeds draw as before.
func waitSteps(steps []chaosStep, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x77_61_69_74)) //nolint:gosec // a reproducible test sequence
	faults := append(lostReplies("WAIT"),
		faultproxy.Fault{Command: "WAIT", Action: faultproxy.DelayReply, Delay: chaosShortDelay / 2},
		faultproxy.Fault{Command: "WAIT", Action: faultproxy.Answer, Reply: "NOPERM User default has no permissions to run the 'wait' command"},
	)
	for i := range steps {
		roll, pick := rng.IntN(100), rng.IntN(2*len(faults))
		switch k := steps[i].Kind; {
		case roll >= chaosWaitShare || k != stepApply && k != stepApplySaved && k != stepImportBlock:
		case pick >= len(faults): // half of them: the replica detached
			steps[i].Detach = true
		default:
			steps[i].Faults = append(steps[i].Faults, faults[pick])
		}
	}
}

// chaosWaitShare is the percentage of a replicated campaign's applies that are WAIT steps.
const chaosWaitShare = 40

// lostReplies are the faults that keep every reply to command from the provider: dropped, cut,
// never answered, or late past command_timeout (in this order, which the draws index).
func lostReplies(command string) []faultproxy.Fault {
	return []faultproxy.Fault{
		{Command: command, Action: faultproxy.DropReply},
		{Command: command, Action: faultproxy.CutReply},
		{Command: command, Action: faultproxy.Hang},
		{Command: command, Action: faultproxy.DelayReply, Delay: chaosLateDelay},
	}
}

// slotMapSteps makes a quarter of a Cluster campaign's applies (chaosSlotMapShare) meet a slot
// map that never loads: one more fault, the step's first (the one that acts where others
// match too), on every CLUSTER SLOTS, that keeps its reply from the provider (dropped, cut,
// never answered, or late), and -refresh=false, so that the apply gets
// past its refresh (which must fail on such a map) to its creates, each of which then meets
// the failed load first. Drawn from a stream of its own, so that every other draw of the seed
// (and the standalone campaign) stays as it was.
func slotMapSteps(steps []chaosStep, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x73_6c_6f_74_73)) //nolint:gosec // a reproducible test sequence
	lost := lostReplies("CLUSTER SLOTS")
	for i := range steps {
		roll, f := rng.IntN(100), lost[rng.IntN(len(lost))]
		if steps[i].Kind == stepApply && roll < chaosSlotMapShare {
			steps[i].Faults = append([]faultproxy.Fault{f}, steps[i].Faults...) // first, so that it acts on every CLUSTER SLOTS
			steps[i].NoRefresh = true
		}
	}
}

// chaosSlotMapShare is the percentage of a Cluster campaign's applies that are slot-map steps.
const chaosSlotMapShare = 25

// chaosFault draws one fault: any kind the proxy knows, on a command the provider sends. A
// fault picks its commands by what they are, never by the order they arrive in, since nothing
// fixes that order (Terraform walks independent resources in no set order, at any
// parallelism; go-redis opens connections, and loads a cluster's slot map, from whichever
// node comes first), and a replay must meet the same faults on the same commands:
//   - a fault on XGROUP CREATE acts on one group's create, the only one an apply sends for it:
//     its stream and group are chosen when the step runs, among the groups it declares
//     (resolveFaults), since what a step declares is decided only then;
//   - a fault on another command (XINFO GROUPS, XINFO STREAM, TYPE, or any command) names one
//     stream and acts on every such command of the step on that stream;
//   - a fault on what every connection needs (HELLO, the slot map) or on connections (Refuse)
//     acts on every one of the step.
func chaosFault(rng *rand.Rand, mode chaosMode) faultproxy.Fault {
	commands := []string{"XGROUP CREATE", "XGROUP CREATE", "XGROUP CREATE", "XINFO GROUPS", "XINFO GROUPS", "XINFO GROUPS",
		"XINFO STREAM", "TYPE", "HELLO", ""}
	if mode == chaosCluster { // the slot map, loaded by the first command of every provider process
		commands = append(commands, "CLUSTER SLOTS", "CLUSTER SLOTS")
	}
	action, command := faultproxy.Actions[rng.IntN(len(faultproxy.Actions))], rng.IntN(len(commands))
	f := faultproxy.Fault{Action: action, Command: commands[command]}
	switch f.Command {
	case "XGROUP CREATE":
		f.Times = 1 // Key and Group: resolveFaults
	case "HELLO", "CLUSTER SLOTS":
	default:
		f.Key = chaosStreams[rng.IntN(len(chaosStreams))]
	}
	switch f.Action {
	case faultproxy.Answer:
		f.Reply = chaosReplies[rng.IntN(len(chaosReplies))]
	case faultproxy.DelayReply:
		f.Delay = time.Duration(50+rng.IntN(int(chaosShortDelay/time.Millisecond)-50)) * time.Millisecond
		if rng.IntN(2) == 0 {
			f.Delay = chaosLateDelay
		}
	case faultproxy.Refuse:
		// Refuse acts on connections, so the command drawn does not apply. Its draw decides how
		// many connections are refused instead (so that the rest of a seed draws as it did):
		// every one, which no retry gets past, or only the first one or two, which a provider
		// with max_retries gets past by connecting again.
		f.Command, f.Key, f.Times = "", "", command%3
	}
	return f
}

// resolveFaults gives the step's faults on XGROUP CREATE their group: one of the groups the
// configuration declares now, most often one that state does not hold with its resource (the
// step's apply would create it), or any group when it declares none (no create will come).
// What it picks from is what earlier steps left, so a replay picks the same.
func (run *chaosRun) resolveFaults(faults []faultproxy.Fault, rng *rand.Rand, state map[string]chaosEntry) []faultproxy.Fault {
	out := slices.Clone(faults)
	var toCreate []chaosResource
	for _, r := range run.declared {
		if e, held := state[r.address()]; !held || e.group() != [2]string{r.Stream, r.Name} {
			toCreate = append(toCreate, r)
		}
	}
	for i, f := range out {
		if f.Command != "XGROUP CREATE" || f.Key != "" {
			continue
		}
		pool := run.declared
		if len(toCreate) > 0 && rng.IntN(4) != 0 {
			pool = toCreate
		}
		if len(pool) > 0 {
			r := pool[rng.IntN(len(pool))]
			out[i].Key, out[i].Group = r.Stream, r.Name
		} else {
			out[i].Key, out[i].Group = chaosStreams[rng.IntN(len(chaosStreams))], chaosNames[rng.IntN(len(chaosNames))]
		}
	}
	return out
}

// lateReply tells whether a fault kept the reply to r from the provider within its timeout:
// swallowed (DropReply), cut (CutReply), never answered (Hang), or held back past
// command_timeout (a late DelayReply). The fault decides, not a clock: the campaign's delays
// are either far below command_timeout or far past it.
//
// A reply the server never gave (the command was written to it, and nothing came back: the
// server restarted meanwhile), or that the proxy could not write to the provider, did not reach
// it either, whatever the clock says.
func lateReply(r faultproxy.Record) bool {
	switch r.Action {
	case faultproxy.DropReply, faultproxy.CutReply, faultproxy.Hang:
		return true
	case faultproxy.DelayReply:
		return r.Delay > chaosCommandTimeout
	}
	return r.Forwarded && !r.Ran || r.Ran && !r.Delivered
}

// chaosResource is one declared valkey_stream_group.
type chaosResource struct {
	Addr   string // the resource name: valkey_stream_group.<Addr>
	Stream string
	Name   string
	Start  string
}

func (r chaosResource) address() string { return "valkey_stream_group." + r.Addr }

// chaosImport is an import block of one step.
type chaosImport struct {
	To       chaosResource
	Identity bool // identity = { stream, name } instead of id
}

// renderChaosConfig is main.tf: the provider through the target's proxies, the declared groups,
// and the step's import block.
func renderChaosConfig(provider string, declared []chaosResource, imp *chaosImport) string {
	var b strings.Builder
	b.WriteString(provider)
	for _, r := range declared {
		fmt.Fprintf(&b, "\nresource \"valkey_stream_group\" %q {\n  stream      = %q\n  name        = %q\n  group_start = %q\n}\n",
			r.Addr, r.Stream, r.Name, r.Start)
	}
	if imp != nil {
		if imp.Identity {
			fmt.Fprintf(&b, "\nimport {\n  to       = %s\n  identity = { stream = %q, name = %q }\n}\n", imp.To.address(), imp.To.Stream, imp.To.Name)
		} else {
			fmt.Fprintf(&b, "\nimport {\n  to = %s\n  id = %q\n}\n", imp.To.address(), chaosImportID(imp.To.Stream, imp.To.Name))
		}
	}
	return b.String()
}

// chaosImportID is a group's import ID as the README writes it: the stream key, "/", and the
// name with "%" and "/" written %25 and %2F.
func chaosImportID(stream, name string) string {
	return stream + "/" + strings.NewReplacer("%", "%25", "/", "%2F").Replace(name)
}
