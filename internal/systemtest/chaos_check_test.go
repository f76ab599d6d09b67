package systemtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/planwords"
)

// The invariants the campaign checks after every step that ran the CLI. Each takes what the
// step saw (chaosObservation) and returns what it found wrong, and how many assertions it made.

// chaosEntry is one valkey_stream_group in terraform.tfstate.
type chaosEntry struct {
	Stream, Name string
	Start        *string
	Adopted      bool
	ID           string
	Identity     map[string]string
}

func (e chaosEntry) group() [2]string { return [2]string{e.Stream, e.Name} }

// readChaosState reads terraform.tfstate itself (no CLI run): the groups by address.
func readChaosState(dir string) (map[string]chaosEntry, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if os.IsNotExist(err) {
		return map[string]chaosEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	var state struct {
		Resources []struct {
			Mode, Type, Name string
			Instances        []struct {
				Attributes struct {
					ID         string  `json:"id"`
					Stream     string  `json:"stream"`
					Name       string  `json:"name"`
					GroupStart *string `json:"group_start"`
					Adopted    bool    `json:"adopted"`
				} `json:"attributes"`
				Identity map[string]string `json:"identity"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		return nil, fmt.Errorf("terraform.tfstate: %w", err)
	}
	entries := map[string]chaosEntry{}
	for _, r := range state.Resources {
		if r.Mode != "managed" || r.Type != "valkey_stream_group" {
			continue
		}
		for _, in := range r.Instances {
			a := in.Attributes
			entries["valkey_stream_group."+r.Name] = chaosEntry{Stream: a.Stream, Name: a.Name, Start: a.GroupStart, Adopted: a.Adopted,
				ID: a.ID, Identity: in.Identity}
		}
	}
	return entries, nil
}

// chaosMessages are the -json stream's messages about resources: what was planned for each
// address, which applies began.
type chaosMessages struct {
	planned   map[string]string // address -> create, update, delete, replace, ...
	started   map[string]bool
	completed map[string][]string // address -> the actions applied: create, update, delete
}

func readChaosMessages(stdout []byte) chaosMessages {
	m := chaosMessages{planned: map[string]string{}, started: map[string]bool{}, completed: map[string][]string{}}
	for line := range bytes.Lines(stdout) {
		var msg struct {
			Type   string `json:"type"`
			Change struct {
				Resource struct{ Addr string } `json:"resource"`
				Action   string                `json:"action"`
			} `json:"change"`
			Hook struct {
				Resource struct{ Addr string } `json:"resource"`
				Action   string                `json:"action"`
			} `json:"hook"`
		}
		if json.Unmarshal(line, &msg) != nil {
			continue
		}
		switch msg.Type {
		case "planned_change":
			m.planned[msg.Change.Resource.Addr] = msg.Change.Action
		case "apply_start":
			m.started[msg.Hook.Resource.Addr] = true
		case "apply_complete":
			m.completed[msg.Hook.Resource.Addr] = append(m.completed[msg.Hook.Resource.Addr], msg.Hook.Action)
		}
	}
	return m
}

// chaosObservation is everything one CLI step saw.
type chaosObservation struct {
	step          chaosStep
	kind          stepKind // what ran: apply-saved with no saved plan runs as apply
	res           cliResult
	pre, post     map[string]chaosEntry
	before, after *chaosModel // the model before the step, and after its creates
	log           []faultproxy.Record
	msgs          chaosMessages
	declared      map[string]chaosResource // by address, as the step's configuration declared them
	imported      string                   // the address an import step took
	addrs         []string                 // what the provider was given
	acted         int                      // faults that acted in the step
	refreshed     bool                     // the command read every group in state before it ended
	mode          chaosMode
	predicted     map[[2]string]string // the model's reply to each group's first XGROUP CREATE of the step
	event         *duringEvent         // the step's event; nil for none
	server        *chaosModel          // the server as read right before the CLI ran
	global        int                  // faults that struck every stream: refused connections, a detached replica
}

// untouched tells whether nothing of the step struck stream: no fault acted on a command on it
// or on a command of no key (a connection's HELLO, AUTH, SELECT), no connection was refused,
// and no event ran, or only one that struck another stream's command without restarting the
// server. What the plan says of such a stream must be what the server held.
func (o *chaosObservation) untouched(stream string) bool {
	if o.global > 0 || o.event != nil && o.event.fired && (o.event.kind.restarts() || o.event.change.Stream == stream) {
		return false
	}
	for _, r := range o.log {
		if (r.Action != 0 || r.Before > 0) && (r.Key == stream || r.Key == "") {
			return false
		}
	}
	return true
}

// removedDuring tells whether the step's event took group name of stream off the server (a DEL
// or SET of the stream, or XGROUP DESTROY of the group) while the CLI ran: the server did not
// hold it throughout, whatever it holds before and after the step.
func (o *chaosObservation) removedDuring(stream, name string) bool {
	ev := o.event
	if ev == nil || !ev.fired || ev.err != nil || ev.change.Stream != stream {
		return false
	}
	switch ev.change.Kind {
	case "del", "set":
		return true
	case "destroy":
		return ev.change.Name == name
	}
	return false
}

type chaosCheck struct {
	name  string
	check func(o *chaosObservation) (problems []string, checked int)
}

// The invariants' names, which planted bugs name as what catches them.
const (
	invariantAdopted    = "adopted is true to what was on the server before the create"
	invariantCreateOnce = "XGROUP CREATE at most once per group and apply"
	invariantStart      = "a group the provider created starts where group_start says"
	invariantOnlyReads  = "the provider sends reads and XGROUP CREATE only, and XGROUP CREATE only to apply"
)

const invariantState = "state keeps what the server has, and after a refresh only that"

const invariantNamed = "every error (and skipped check) names the address and the cause"

const invariantPreview = "a plan previews what the server holds of every stream no fault touched"

// invariantServer is checked after every step, CLI or not (chaosRun.checkServer).
const invariantServer = "the server holds what the model says"

const invariantUnknown = "outcome unknown exactly when the reply to a written create did not reach the provider in time"

const invariantUnconfirmed = "not confirmed by replicas exactly when WAIT did not confirm a create that ran, the group on the primary and out of state"

var chaosInvariants = []chaosCheck{
	{"no panic, no crash", checkNoPanic},
	{invariantNamed, checkErrorsNamed},
	{invariantState, checkStateKept},
	{invariantAdopted, checkAdopted},
	{invariantCreateOnce, checkCreateOnce},
	{invariantUnknown, checkUnknownOutcome},
	{invariantUnconfirmed, checkUnconfirmed},
	{invariantStart, checkStart},
	{invariantOnlyReads, checkOnlyReads},
	{"every state entry's id and identity name its group", checkIdentity},
	{invariantPreview, checkPreview},
	{invariantImport, checkImport},
}

const invariantImport = "importing a group the server holds records it, adopted"

// checkImport: an import of a group the server held when the CLI ran, on a stream no fault or
// event touched, must succeed and record that group, adopted: `terraform import` whatever else
// the step's faults did, an import block when its apply succeeded (an apply that failed
// elsewhere may stop before it). IDs hold "/" in stream and group names alike
// ("emq:{d}:stream/main", "team/search"), so a split at the wrong "/" fails here.
func checkImport(o *chaosObservation) ([]string, int) {
	r, ok := o.declared[o.imported]
	if o.imported == "" || !ok || !o.server.has(r.Stream, r.Name) || !o.untouched(r.Stream) ||
		o.kind == stepImportBlock && o.res.err != nil {
		return nil, 0
	}
	e, held := o.post[o.imported]
	switch {
	case o.kind == stepImportCLI && o.res.err != nil:
		return []string{fmt.Sprintf("terraform import of group %q of %q (ID %q), which the server holds, failed: %v",
			r.Name, r.Stream, chaosImportID(r.Stream, r.Name), o.res.err)}, 1
	case !held || e.group() != [2]string{r.Stream, r.Name} || !e.Adopted:
		return []string{fmt.Sprintf("%s holds %+v after importing group %q of %q (ID %q), which the server holds; the model expected it, adopted",
			o.imported, e, r.Name, r.Stream, chaosImportID(r.Stream, r.Name))}, 1
	}
	return nil, 1
}

// chaosCrashed are what the CLI prints when a provider crashes or hangs up.
var chaosCrashed = []string{"panic:", "goroutine ", "Plugin did not respond", "The plugin encountered an error",
	"plugin exited", "rpc error: code = Unavailable", "Provider produced inconsistent"}

func checkNoPanic(o *chaosObservation) ([]string, int) {
	out := string(o.res.output())
	for _, m := range chaosCrashed {
		if strings.Contains(out, m) {
			return []string{fmt.Sprintf("terraform %s printed %q", o.res.command, m)}, 1
		}
	}
	return nil, 1
}

// chaosSummaries are the error summaries the provider may give in the campaign.
var chaosSummaries = []string{"Consumer Group Not Created", "Consumer Group Outcome Unknown", "Consumer Group Not Read",
	"Consumer Group Not Imported", "Consumer Group Not Found For Import", "Consumer Group Cannot Be Created"}

// chaosCauses are the causes the provider names, written as a user reads them in an error or
// a skipped check's warning: its words for a reply lost or late, for each way a connection
// the campaign's faults break fails, for a key of another type (the campaign's SET) and for an
// import of a group the server lacks; and the server's own words, the error replies the
// campaign injects (chaosReplies), which the provider quotes. A transport's bare words ("EOF",
// "i/o timeout") are not a cause a user can act on, and do not count.
var chaosCauses = append([]string{
	chaosLostLate,                       // Consumer Group Outcome Unknown: a reply past command_timeout
	chaosLostClosed,                     // Consumer Group Outcome Unknown: a reply dropped or cut
	"The server closed the connection",  // a dropped or cut reply, a reset connection
	"The server did not answer in time", // a hang, a reply past command_timeout
	"Nothing is listening there",        // a refused connection
	"holds a string, not a stream",
	"holds a non-stream value, not a stream", // WRONGTYPE, when a fault kept TYPE from naming the type
	"has no consumer group",
	"replicas asked for",      // Not Confirmed By Replicas: "only 0 of the 1 replicas asked for ... confirmed it"
	"the reply to WAIT",       // Not Confirmed By Replicas: WAIT's reply lost or late
	"the server refused WAIT", // Not Confirmed By Replicas: WAIT answered an error
}, chaosReplies...)

// chaosError is one error the CLI reported: a -json diagnostic, or a block of a human-readable
// run (import).
type chaosError struct{ summary, detail, address string }

var humanError = regexp.MustCompile(`(?m)^Error: (.*)$`)

func (o *chaosObservation) errors() []chaosError {
	var out []chaosError
	if o.kind == stepImportCLI {
		text := string(o.res.stderr)
		idx := humanError.FindAllStringSubmatchIndex(text, -1)
		for i, m := range idx {
			end := len(text)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			out = append(out, chaosError{summary: text[m[2]:m[3]], detail: text[m[3]:end]})
		}
		return out
	}
	for _, d := range o.res.diags {
		if d.Severity == tfjson.DiagnosticSeverityError {
			out = append(out, chaosError{summary: d.Summary, detail: d.Detail, address: d.Address})
		}
	}
	return out
}

// summaries are the error summaries the provider may give in the step's mode: with replicas
// asked to confirm, also chaosUnconfirmedSummary.
func (o *chaosObservation) summaries() []string {
	if o.mode == chaosReplicated {
		return append(slices.Clone(chaosSummaries), chaosUnconfirmedSummary)
	}
	return chaosSummaries
}

func checkErrorsNamed(o *chaosObservation) ([]string, int) {
	var problems []string
	errs := o.errors()
	if o.res.err != nil && len(errs) == 0 {
		problems = append(problems, fmt.Sprintf("terraform %s failed (%v) with no error diagnostic", o.res.command, o.res.err))
	}
	for _, e := range errs {
		detail := diagtest.Unwrap(e.detail)
		if !slices.Contains(o.summaries(), e.summary) {
			problems = append(problems, fmt.Sprintf("unexpected error %q: %s", e.summary, detail))
			continue
		}
		if !slices.ContainsFunc(o.addrs, func(a string) bool { return strings.Contains(detail, a) }) {
			problems = append(problems, fmt.Sprintf("error %q names none of %v: %s", e.summary, o.addrs, detail))
		}
		if !slices.ContainsFunc(chaosCauses, func(c string) bool { return strings.Contains(detail, c) }) {
			problems = append(problems, fmt.Sprintf("error %q names no cause: %s", e.summary, detail))
		}
	}
	// A plan whose check could not reach the server says so in a warning, with the same facts.
	skipped := 0
	for _, d := range o.res.diags {
		if d.Severity != tfjson.DiagnosticSeverityWarning || !strings.HasPrefix(d.Summary, planwords.PlanCheckSkipped) &&
			d.Summary != planwords.ReplayCheckSkipped {
			continue
		}
		skipped++
		detail := diagtest.Unwrap(d.Detail)
		if !slices.ContainsFunc(o.addrs, func(a string) bool { return strings.Contains(detail, a) }) ||
			!slices.ContainsFunc(chaosCauses, func(c string) bool { return strings.Contains(detail, c) }) {
			problems = append(problems, fmt.Sprintf("warning %q does not name the address and the cause: %s", d.Summary, detail))
		}
	}
	return problems, 1 + len(errs) + skipped
}

func checkStateKept(o *chaosObservation) ([]string, int) {
	var problems []string
	checked := 0
	failed := o.res.err != nil
	// (No clause compares the state file's bytes: a plan writes none, and a command that fails
	// before it applies anything writes none either, whatever the provider answered.)
	// A command that refreshed and succeeded read every group in state: what is left is on
	// the server.
	if o.refreshed && !failed {
		for addr, e := range o.post {
			checked++
			if !o.after.has(e.Stream, e.Name) {
				problems = append(problems, fmt.Sprintf("%s holds group %q of %q after a terraform %s that refreshed and succeeded; the model expected it gone from state, since the server does not hold it",
					addr, e.Name, e.Stream, o.res.command))
			}
		}
	}
	for addr, e := range o.pre {
		checked++
		if now, kept := o.post[addr]; kept && now.group() == e.group() {
			continue
		}
		if !o.before.has(e.Stream, e.Name) || !o.after.has(e.Stream, e.Name) || o.removedDuring(e.Stream, e.Name) {
			continue // the server did not have it when Terraform read it
		}
		if action := o.msgs.planned[addr]; o.kind == stepDestroy || action == "delete" || action == "replace" {
			continue // a destroy was asked
		}
		problems = append(problems, fmt.Sprintf("%s (group %q of %q) left state although the server holds the group throughout",
			addr, e.Name, e.Stream))
	}
	return problems, checked
}

// creates are the step's XGROUP CREATE commands for group g, in order.
func (o *chaosObservation) creates(g [2]string) []faultproxy.Record {
	var out []faultproxy.Record
	for _, r := range o.log {
		if r.Command == "XGROUP CREATE" && len(r.Args) >= 2 && r.Args[0] == g[0] && r.Args[1] == g[1] {
			out = append(out, r)
		}
	}
	return out
}

func checkAdopted(o *chaosObservation) ([]string, int) {
	var problems []string
	checked := 0
	for addr, e := range o.post {
		checked++
		p, inPre := o.pre[addr]
		fresh := !inPre || p.group() != e.group() || slices.Contains(o.msgs.completed[addr], "create")
		if !fresh {
			switch {
			case p.Adopted != e.Adopted:
				problems = append(problems, fmt.Sprintf("%s kept its group but adopted changed from %v to %v", addr, p.Adopted, e.Adopted))
			case p.Start != nil && (e.Start == nil || *e.Start != *p.Start):
				problems = append(problems, fmt.Sprintf("%s kept its group but group_start changed from %q to %v with no replacement", addr, *p.Start, e.Start))
			}
			continue
		}
		existed := o.before.has(e.Stream, e.Name)
		if addr == o.imported {
			if !e.Adopted || !existed {
				problems = append(problems, fmt.Sprintf("%s was imported with adopted = %v; the group existed before: %v", addr, e.Adopted, existed))
			}
			continue
		}
		creates := o.creates(e.group())
		if len(creates) == 0 {
			problems = append(problems, fmt.Sprintf("%s was written to state (adopted = %v) with no XGROUP CREATE of group %q of %q",
				addr, e.Adopted, e.Name, e.Stream))
			continue
		}
		// What the model held right before the create: another client may have made or removed
		// the group during the step (chaos_during_test.go).
		if p, ok := o.predicted[e.group()]; ok {
			existed = p == "-BUSYGROUP"
		}
		last := lastRun(creates)
		switch {
		case lateReply(last):
			problems = append(problems, fmt.Sprintf("%s was written to state (adopted = %v); the model expected nothing recorded, since the reply to its XGROUP CREATE did not reach the provider in time (%s)",
				addr, e.Adopted, describeRecord(last)))
		case !e.Adopted && existed:
			problems = append(problems, fmt.Sprintf("%s has adopted = false, but group %q of %q existed before its XGROUP CREATE (reply %q)",
				addr, e.Name, e.Stream, last.Reply))
		case !e.Adopted && last.Reply != "+OK":
			problems = append(problems, fmt.Sprintf("%s has adopted = false, but its XGROUP CREATE answered %q", addr, last.Reply))
		case e.Adopted && !existed:
			problems = append(problems, fmt.Sprintf("%s has adopted = true, but group %q of %q did not exist before this apply's XGROUP CREATE (replies: %s)",
				addr, e.Name, e.Stream, replies(creates)))
		case e.Adopted != (o.warnings(chaosAdoptedSummary(e.Stream, e.Name)) > 0):
			problems = append(problems, fmt.Sprintf("%s has adopted = %v, and the apply warned %d times %q",
				addr, e.Adopted, o.warnings(chaosAdoptedSummary(e.Stream, e.Name)), chaosAdoptedSummary(e.Stream, e.Name)))
		}
	}
	return problems, checked
}

// describeRecord is what became of one command, as a reader of a failure wants it.
func describeRecord(r faultproxy.Record) string {
	what := "no fault"
	if r.Action != 0 {
		what = r.Action.String()
	}
	if r.Action == faultproxy.DelayReply {
		what += fmt.Sprintf(" %v (command_timeout %v)", r.Delay, chaosCommandTimeout)
	}
	if r.Before > 0 {
		what += ", struck by the step's event" // chaos_during_test.go
	}
	return fmt.Sprintf("%s, forwarded %v, reply %q, delivered %v", what, r.Forwarded, r.Reply, r.Delivered)
}

// lastRun is the last of a group's creates that a node did not redirect (the one that could
// run; its attempts are on one node each, and the log lists each proxy's in turn), or the
// last one.
func lastRun(creates []faultproxy.Record) faultproxy.Record {
	for i := len(creates) - 1; i >= 0; i-- {
		if !redirected(creates[i]) {
			return creates[i]
		}
	}
	return creates[len(creates)-1]
}

func replies(records []faultproxy.Record) string {
	out := make([]string, len(records))
	for i, r := range records {
		out[i] = describeRecord(r)
	}
	return strings.Join(out, ", ")
}

func checkCreateOnce(o *chaosObservation) ([]string, int) {
	var problems []string
	count := map[[2]string]int{}
	for _, r := range o.log {
		if r.Command == "XGROUP CREATE" && len(r.Args) >= 2 && !redirected(r) { // a redirected create did not run: its follow-up is the same create
			count[[2]string{r.Args[0], r.Args[1]}]++
		}
	}
	for g, n := range count {
		if n > 1 {
			problems = append(problems, fmt.Sprintf("XGROUP CREATE of group %q of %q was sent %d times in one %s (replies: %s)",
				g[1], g[0], n, o.res.command, replies(o.creates(g))))
		}
	}
	return problems, len(count)
}

// checkUnknownOutcome: a create whose reply a fault kept from the provider within its timeout
// (lateReply: dropped, cut, never answered, or held back past command_timeout) must be
// reported as "Consumer Group Outcome Unknown", and nothing else may be.
func checkUnknownOutcome(o *chaosObservation) ([]string, int) {
	var problems []string
	checked := 0
	reported := map[string][]string{} // address -> the error summaries the CLI gave it
	said := map[string][]string{}     // address -> the details of its Outcome Unknown errors
	for _, e := range o.errors() {
		reported[e.address] = append(reported[e.address], e.summary)
		if e.summary != chaosUnknownSummary {
			continue
		}
		said[e.address] = append(said[e.address], diagtest.Unwrap(e.detail))
		if _, ok := o.declared[e.address]; !ok {
			checked++
			problems = append(problems, fmt.Sprintf("%s for %q, which the configuration does not declare", chaosUnknownSummary, e.address))
		}
	}
	for addr, r := range o.declared {
		creates := o.creates([2]string{r.Stream, r.Name})
		unknown := slices.Contains(reported[addr], chaosUnknownSummary)
		if len(creates) == 0 && !unknown {
			continue
		}
		checked++
		lost := slices.ContainsFunc(creates, lateReply)
		held := slices.ContainsFunc(creates, o.heldByRestart)
		saw := "no error"
		if len(reported[addr]) > 0 {
			saw = strings.Join(reported[addr], ", ")
		}
		switch {
		case lost && !unknown:
			problems = append(problems, fmt.Sprintf("%s: the reply to its XGROUP CREATE did not reach the provider in time (%s); the model expected %q, the CLI reported %s",
				addr, replies(creates), chaosUnknownSummary, saw))
		case !lost && unknown && !held:
			problems = append(problems, fmt.Sprintf("%s: the CLI reported %q; the model expected a known outcome, since no fault kept the reply to its XGROUP CREATE from the provider (%s)",
				addr, chaosUnknownSummary, replies(creates)))
		case lost:
			why := lostWhy(creates)
			if held { // the restart's length decides whether the timeout came first: either why is true
				why = []string{chaosLostLate, chaosLostClosed}
			}
			if !slices.ContainsFunc(said[addr], func(d string) bool {
				return slices.ContainsFunc(why, func(w string) bool { return strings.Contains(d, w) })
			}) {
				problems = append(problems, fmt.Sprintf("%s: the reply to its XGROUP CREATE was lost (%s); the model expected %q to say one of %q, the CLI said: %s",
					addr, replies(creates), chaosUnknownSummary, why, strings.Join(said[addr], " | ")))
			}
		}
	}
	return problems, checked
}

// heldByRestart tells whether the step's event held create at the proxy while the server
// restarted. Whether the reply then reaches the provider within command_timeout depends on how
// long the restart takes, which only a clock can tell: the model accepts Outcome Unknown for
// it as well as the outcome of the reply, and either why for a lost reply (the fault's, or a
// timeout during the restart), so that its verdict is the same on an idle machine and a loaded
// one. Either way the other invariants hold the provider to what it reported.
func (o *chaosObservation) heldByRestart(create faultproxy.Record) bool {
	return create.Before > 0 && o.event != nil && o.event.kind.restarts()
}

// lostWhy is what the model expects an Outcome Unknown to say about why the reply of creates
// was lost, from the fault that struck the last create whose reply did not come in time: held
// back past command_timeout or never answered, it was late; dropped or cut, the connection
// closed first. A reply lost otherwise (a server stopped under the command, or a short delay
// cut by it) may read as either.
func lostWhy(creates []faultproxy.Record) []string {
	why := []string{chaosLostLate, chaosLostClosed}
	for _, r := range creates {
		switch {
		case !lateReply(r):
		case r.Action == faultproxy.Hang || r.Action == faultproxy.DelayReply && r.Delay > chaosCommandTimeout:
			why = []string{chaosLostLate}
		case r.Action == faultproxy.DropReply || r.Action == faultproxy.CutReply:
			why = []string{chaosLostClosed}
		}
	}
	return why
}

// checkUnconfirmed: a create that ran and whose reply reached the provider in time (created, or
// BUSYGROUP: adopted), but whose WAIT did not confirm it (the replica detached: WAIT answered 0;
// WAIT's reply dropped, cut, never answered or late; WAIT refused), must be reported as
// "Consumer Group Not Confirmed By Replicas" (not as success, not as "Not Created" or
// "Outcome Unknown"), the group must be on the primary, and state must not record it; and a
// create that WAIT confirmed must not be reported so. The next apply adopting the group is
// checkAdopted's (the group existed before its XGROUP CREATE).
func checkUnconfirmed(o *chaosObservation) ([]string, int) {
	var problems []string
	checked := 0
	reported := map[string][]string{}
	for _, e := range o.errors() {
		reported[e.address] = append(reported[e.address], e.summary)
	}
	for addr, r := range o.declared {
		g := [2]string{r.Stream, r.Name}
		creates := o.creates(g)
		flagged := slices.Contains(reported[addr], chaosUnconfirmedSummary)
		if len(creates) == 0 {
			if flagged {
				checked++
				problems = append(problems, fmt.Sprintf("%s: the CLI reported %q, but no XGROUP CREATE of group %q of %q was sent", addr, chaosUnconfirmedSummary, r.Name, r.Stream))
			}
			continue
		}
		create := creates[len(creates)-1]
		ran := !lateReply(create) && create.Delivered && (create.Reply == "+OK" || strings.HasPrefix(create.Reply, "-BUSYGROUP"))
		if !ran || o.mode != chaosReplicated {
			if flagged && !ran {
				checked++
				problems = append(problems, fmt.Sprintf("%s: the CLI reported %q, but its XGROUP CREATE did not succeed (%s)", addr, chaosUnconfirmedSummary, describeRecord(create)))
			}
			continue // an unknown or failed create: invariantUnknown and the model's
		}
		checked++
		wait, confirmed, reset := o.waitAfter(create)
		saw := "no error"
		if len(reported[addr]) > 0 {
			saw = strings.Join(reported[addr], ", ")
		}
		switch {
		case reset && flagged && (!o.after.has(r.Stream, r.Name) || o.post[addr].group() == g):
			problems = append(problems, fmt.Sprintf("%s: the CLI reported %q; the model expected group %q of %q on the primary and out of state (on the primary: %v, in state: %v)",
				addr, chaosUnconfirmedSummary, r.Name, r.Stream, o.after.has(r.Stream, r.Name), o.post[addr].group() == g))
		case reset:
			// A fault reset the connection after the create's round trip began: the reset may
			// discard replies the proxy wrote and the provider had not read yet, so what it saw
			// is the kernel's timing, not the fault's; only the report's own promises hold.
		case !confirmed && !flagged:
			problems = append(problems, fmt.Sprintf("%s: its XGROUP CREATE answered %q, but WAIT did not confirm it (%s); the model expected %q, the CLI reported %s",
				addr, create.Reply, wait, chaosUnconfirmedSummary, saw))
		case confirmed && flagged:
			problems = append(problems, fmt.Sprintf("%s: WAIT confirmed its create (%s); the model expected no %q", addr, wait, chaosUnconfirmedSummary))
		case !confirmed && !o.after.has(r.Stream, r.Name):
			problems = append(problems, fmt.Sprintf("%s: group %q of %q is not on the primary after an XGROUP CREATE that answered %q", addr, r.Name, r.Stream, create.Reply))
		case !confirmed && o.post[addr].group() == g:
			problems = append(problems, fmt.Sprintf("%s: state records group %q of %q, which WAIT did not confirm (%s)", addr, r.Name, r.Stream, wait))
		}
	}
	return problems, checked
}

// waitAfter is what became of the WAIT the provider sent after create on its connection, and
// whether it confirmed the create: its reply, an acknowledgement count of 1 or more, reached the
// provider in time. reset tells that a fault cut the connection (DropReply, CutReply) after the
// create, on a later command of the same round trip.
func (o *chaosObservation) waitAfter(create faultproxy.Record) (what string, confirmed, reset bool) {
	after, what := false, "no WAIT after it on its connection"
	for _, r := range o.log {
		switch {
		case r.Conn != create.Conn:
		case !after:
			after = r.Command == create.Command && slices.Equal(r.Args, create.Args)
		case r.Command == "WAIT" && what == "no WAIT after it on its connection":
			n, err := strconv.Atoi(strings.TrimPrefix(r.Reply, ":"))
			what = "WAIT: " + describeRecord(r)
			confirmed = strings.HasPrefix(r.Reply, ":") && err == nil && n >= 1 && r.Delivered && !lateReply(r)
		case r.Action == faultproxy.DropReply || r.Action == faultproxy.CutReply:
			reset = true
		}
	}
	return what, confirmed, reset
}

func checkStart(o *chaosObservation) ([]string, int) {
	var problems []string
	checked := 0
	for addr, e := range o.post {
		if e.Adopted || e.Start == nil {
			continue
		}
		g, ok := o.after.group(e.Stream, e.Name)
		if !ok || g.By != "provider" {
			continue // gone, or made again by another client: nothing to compare
		}
		checked++
		if want := map[string]string{"head": "0", "new": "$"}[*e.Start]; g.ID != want {
			problems = append(problems, fmt.Sprintf("%s says group_start %q, but the XGROUP CREATE that made group %q of %q (step %d) sent ID %q",
				addr, *e.Start, e.Name, e.Stream, g.Step, g.ID))
		}
	}
	return problems, checked
}

// chaosReads are the commands the provider may send besides XGROUP CREATE.
var chaosReads = []string{"HELLO", "SELECT", "PING", "XINFO GROUPS", "XINFO STREAM", "XINFO CONSUMERS", "TYPE", "WAIT",
	"SCAN", "CLUSTER SLOTS", "CLUSTER SHARDS", "CLUSTER NODES", "COMMAND", "READONLY", "ASKING", "QUIT"}

func checkOnlyReads(o *chaosObservation) ([]string, int) {
	var problems []string
	writes := o.kind == stepApply || o.kind == stepApplySaved || o.kind == stepImportBlock
	for _, r := range o.log {
		switch {
		case r.Command == "XGROUP CREATE" && !writes:
			problems = append(problems, fmt.Sprintf("terraform %s sent XGROUP CREATE %v", o.res.command, r.Args))
		case r.Command != "XGROUP CREATE" && !slices.Contains(chaosReads, r.Command):
			problems = append(problems, fmt.Sprintf("terraform %s sent %s %v", o.res.command, r.Command, r.Args))
		}
	}
	return problems, len(o.log)
}

// warnings counts the step's warnings with summary.
func (o *chaosObservation) warnings(summary string) int {
	n := 0
	for _, d := range o.res.diags {
		if d.Severity == tfjson.DiagnosticSeverityWarning && d.Summary == summary {
			n++
		}
	}
	return n
}

// warningsPrefixed counts the step's warnings whose summary starts with prefix.
func (o *chaosObservation) warningsPrefixed(prefix string) int {
	n := 0
	for _, d := range o.res.diags {
		if d.Severity == tfjson.DiagnosticSeverityWarning && strings.HasPrefix(d.Summary, prefix) {
			n++
		}
	}
	return n
}

func checkIdentity(o *chaosObservation) ([]string, int) {
	var problems []string
	for addr, e := range o.post {
		if want := chaosImportID(e.Stream, e.Name); e.ID != want {
			problems = append(problems, fmt.Sprintf("%s holds group %q of %q with id %q; the model expected %q", addr, e.Name, e.Stream, e.ID, want))
		}
		if e.Identity != nil && (e.Identity["stream"] != e.Stream || e.Identity["name"] != e.Name) {
			problems = append(problems, fmt.Sprintf("%s has identity %v for group %q of %q", addr, e.Identity, e.Name, e.Stream))
		}
	}
	return problems, len(o.post)
}

// checkPreview holds a plan to what the server held of each group it plans to create, for
// every stream no fault or event touched (untouched), faulted steps included: adopted if the
// group exists, with the lag XINFO GROUPS gave; a new stream if there is none, noted once per
// stream; else the entries that head replays or new skips, with the IDs of the first and the
// last. An apply shows the previews of its plan and those of the plan Terraform makes again
// before each resource, when this apply's other creates may have made the stream: there each
// preview is counted as given or not. A stream whose check the plan says it skipped (a
// refusal, a slot that would not settle) is not held to a preview, and neither is any stream
// of a plan that could not ask the server at all.
func checkPreview(o *chaosObservation) ([]string, int) {
	applies := o.kind == stepApply || o.kind == stepImportBlock
	if o.kind != stepPlan && !applies || o.kind == stepPlan && o.res.err != nil {
		return nil, 0
	}
	if o.acted > 0 && o.warnings(planwords.PlanCheckSkipped) > 0 {
		return nil, 0 // a fault kept the plan from asking the server: no stream was previewed
	}
	var problems []string
	checked := 0
	given := func(n int) bool { return n == 1 || applies && n > 1 }
	for addr, action := range o.msgs.planned {
		r, declared := o.declared[addr]
		if !declared || action != "create" && action != "replace" || addr == o.imported || !o.untouched(r.Stream) {
			continue
		}
		if p, ok := o.pre[addr]; ok && action == "replace" && p.group() == [2]string{r.Stream, r.Name} {
			continue // a change of group_start: the group stays, nothing to preview
		}
		if o.warnings(planwords.StreamCheckSkipped(r.Stream)) > 0 {
			continue
		}
		k := o.server.keys[r.Stream]
		if k != nil && k.Type != "stream" {
			continue // the plan fails on the key of another type
		}
		checked++
		g, exists := o.server.group(r.Stream, r.Name)
		adopt := o.warningsPrefixed(planwords.GroupSummary(r.Stream, r.Name, planwords.WillBeAdopted, planwords.LagFigure(""))) // any lag
		created := o.warnings(planwords.StreamWillBeCreated(r.Stream))
		var backlogSummary string
		var backlog []diagtest.Diagnostic
		if k != nil {
			backlogSummary = chaosBacklogSummary(r.Stream, r.Name, r.Start, k.Length)
			backlog = o.warningsWith(backlogSummary)
		}
		switch {
		case exists != given(adopt) || !exists && adopt > 0:
			problems = append(problems, fmt.Sprintf("%s: group %q of %q exists: %v; the plan warned %d times that it will be adopted", addr, r.Name, r.Stream, exists, adopt))
		case exists && o.warnings(chaosWillAdoptSummary(r.Stream, r.Name, g.Lag)) != adopt:
			problems = append(problems, fmt.Sprintf("%s: group %q of %q has lag %q on the server; the plan's adoption warning said otherwise (%q expected)",
				addr, r.Name, r.Stream, g.Lag, chaosWillAdoptSummary(r.Stream, r.Name, g.Lag)))
		case (k == nil) != given(created) || k != nil && created > 0:
			problems = append(problems, fmt.Sprintf("%s: stream %q exists: %v; the plan said %d times that it will be created", addr, r.Stream, k != nil, created))
		case k != nil && !exists && (k.Length > 0) != given(len(backlog)):
			problems = append(problems, fmt.Sprintf("%s: stream %q holds %d entries, and the plan warned %d times %q", addr, r.Stream, k.Length, len(backlog),
				backlogSummary))
		case k != nil && !exists && k.Length > 0 && slices.ContainsFunc(backlog, func(d diagtest.Diagnostic) bool {
			return !strings.Contains(diagtest.Unwrap(d.Detail), "from "+k.FirstID+" (") || !strings.Contains(diagtest.Unwrap(d.Detail), "to "+k.LastEntry+" (")
		}):
			problems = append(problems, fmt.Sprintf("%s: stream %q holds entries %s to %s; the plan's %q does not quote that range", addr, r.Stream,
				k.FirstID, k.LastEntry, backlogSummary))
		}
	}
	return problems, checked
}

// warningsWith is the step's warnings with summary.
func (o *chaosObservation) warningsWith(summary string) []diagtest.Diagnostic {
	var found []diagtest.Diagnostic
	for _, d := range o.res.diags {
		if d.Severity == tfjson.DiagnosticSeverityWarning && d.Summary == summary {
			found = append(found, d)
		}
	}
	return found
}

// The provider's words the invariants expect, written once, as a user reads them in the CLI's
// output (README, the resource's page).
const (
	chaosUnknownSummary     = "Consumer Group Outcome Unknown"
	chaosUnconfirmedSummary = "Consumer Group Not Confirmed By Replicas"
	chaosLostLate           = "its reply was lost: the server did not answer within command_timeout"
	chaosLostClosed         = "its reply was lost: the connection closed before the reply came"
)

// chaosWillAdoptSummary is the summary of the plan's warning that a group will be adopted, with
// the lag XINFO GROUPS gives ("" when the server cannot compute one).
func chaosWillAdoptSummary(stream, name, lag string) string {
	if lag == "" {
		lag = planwords.LagUnknown
	}
	return planwords.GroupSummary(stream, name, planwords.WillBeAdopted, planwords.LagFigure(lag))
}

// chaosAdoptedSummary is the summary of the warning an apply gives a group it adopted.
func chaosAdoptedSummary(stream, name string) string {
	return planwords.GroupSummary(stream, name, planwords.AdoptedNotCreated, "")
}

// chaosBacklogSummary is the summary of the plan's warning that a group created with start
// will replay (head) or skip (new) the entries of its stream.
func chaosBacklogSummary(stream, name, start string, entries int64) string {
	d := map[string]planwords.Decision{"head": planwords.WillReplay, "new": planwords.WillSkip}[start]
	return planwords.GroupSummary(stream, name, d, planwords.EntriesFigure(entries))
}
