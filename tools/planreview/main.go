// Command planreview turns the JSON UI stream of `terraform plan -json` (or `tofu plan
// -json`, or `apply -json`) into a short markdown review of the valkey_stream_group resources
// in it, for a pull-request comment. A saved plan keeps no diagnostics, so this stream is
// the only record of what the provider found at plan time: which groups will replay or skip
// existing entries, which will be adopted, and whether the check was skipped because the
// server could not be asked.
//
//	terraform plan -out=tfplan -json > plan.jsonl
//	go run ./tools/planreview plan.jsonl > review.md
//
// What a reviewer must see comes first: errors and skipped checks, then the groups that will
// replay entries (most entries first), the ones whose start is not known yet, the ones that
// will skip entries, adoptions, and the rest; the provider's own words follow in a collapsed
// section. Diagnostics are matched to groups by their resource address (the "address" field
// Terraform and OpenTofu add to resource diagnostics); one without an address is listed on
// its own. It exits 2 when the input holds no JSON UI message at all.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/echomq/terraform-provider-valkey/internal/planwords"
)

// resourceType is the type whose plans this tool reviews.
const resourceType = "valkey_stream_group"

// message is one line of the JSON UI stream; only the fields the review reads.
type message struct {
	Type       string      `json:"type"`
	Diagnostic *diagnostic `json:"diagnostic"`
	Change     *struct {
		Resource struct {
			Addr         string `json:"addr"`
			ResourceType string `json:"resource_type"`
		} `json:"resource"`
		Action string `json:"action"`
	} `json:"change"`
}

type diagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	Address  string `json:"address"`
	Snippet  *struct {
		Context *string `json:"context"`
	} `json:"snippet"`
}

// kind is what a diagnostic says about a group, in the order a reviewer reads them.
type kind int

const (
	kindError kind = iota
	kindReplay
	kindReplayOrSkip
	kindSkip
	kindAdopt
	kindStartChange
	kindStays
	kindStreamCreated
	kindOther
	kindNone // nothing said: a plain create, update or the like
)

var kindLabels = map[kind]string{
	kindError:         "**error**",
	kindReplay:        "**replays**",
	kindReplayOrSkip:  "**replays or skips**",
	kindSkip:          "**skips**",
	kindAdopt:         "adopts",
	kindStartChange:   "start change, not moved",
	kindStays:         "stays on server",
	kindStreamCreated: "creates stream",
	kindOther:         "warning",
}

// group is one resource address and everything the stream said about it.
type group struct {
	address      string
	action       string // from planned_change: create, delete, replace, update, ...
	kind         kind   // the most important thing said
	entries      int64  // the entries it will replay or skip, -1 when not said
	name, stream string // as the diagnostics quote them, when they do
	diags        []diagnostic
}

// review is what one stream held.
type review struct {
	groups   map[string]*group
	skipped  []diagnostic // "check skipped": the plan could not ask the server
	loose    []diagnostic // errors and warnings with no address, and errors of other resources
	messages int          // JSON UI messages read
}

func main() {
	in := io.Reader(os.Stdin)
	if len(os.Args) > 2 || len(os.Args) == 2 && strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, "usage: planreview [plan.jsonl]   (reads stdin without a file)")
		os.Exit(2)
	}
	if len(os.Args) == 2 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "planreview:", err)
			os.Exit(2)
		}
		defer func() { _ = f.Close() }()
		in = f
	}
	r, err := read(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "planreview:", err)
		os.Exit(2)
	}
	if r.messages == 0 {
		fmt.Fprintln(os.Stderr, "planreview: no JSON UI message in the input; run plan with -json")
		os.Exit(2)
	}
	fmt.Print(r.markdown())
}

// read consumes a JSON UI stream; lines that are not JSON messages are ignored.
func read(in io.Reader) (*review, error) {
	r := &review{groups: map[string]*group{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m message
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Type == "" {
			continue
		}
		r.messages++
		switch {
		case m.Type == "planned_change" && m.Change != nil && m.Change.Resource.ResourceType == resourceType:
			r.group(m.Change.Resource.Addr).action = m.Change.Action
		case m.Type == "diagnostic" && m.Diagnostic != nil:
			r.add(*m.Diagnostic)
		}
	}
	return r, sc.Err()
}

func (r *review) group(address string) *group {
	g, ok := r.groups[address]
	if !ok {
		g = &group{address: address, kind: kindNone, entries: -1}
		r.groups[address] = g
	}
	return g
}

// add files a diagnostic under its group, or among the skipped checks or the loose ones.
func (r *review) add(d diagnostic) {
	if isCheckSkipped(d) {
		r.skipped = append(r.skipped, d)
		return
	}
	address := addressOf(d)
	if !strings.Contains(address, resourceType+".") {
		if d.Severity == "error" || address == "" {
			r.loose = append(r.loose, d)
		}
		return // another resource's warning: not this review's business
	}
	g := r.group(address)
	g.diags = append(g.diags, d)
	k, name, stream, entries := classify(d)
	if k < g.kind {
		g.kind = k
	}
	if entries >= 0 {
		g.entries = entries
	}
	if g.name == "" {
		g.name, g.stream = name, stream
	}
}

// addressOf is the diagnostic's resource address. CLIs that leave it out still say which
// block the diagnostic is about (`resource "valkey_stream_group" "billing"`), which names the
// resource but not its instance key.
func addressOf(d diagnostic) string {
	if d.Address != "" {
		return d.Address
	}
	if d.Snippet != nil && d.Snippet.Context != nil {
		if m := blockHeader.FindStringSubmatch(*d.Snippet.Context); m != nil {
			return m[1] + "." + m[2]
		}
	}
	return ""
}

var blockHeader = regexp.MustCompile(`^resource "([^"]+)" "([^"]+)"`)

// quotedText matches a Go-quoted string, as the provider quotes names in its messages.
var quotedText = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// words is a summary without its quoted names, so that a stream called "skip-list" does not
// read as a skip.
func words(s string) string { return strings.ToLower(quotedText.ReplaceAllString(s, `""`)) }

func isCheckSkipped(d diagnostic) bool {
	return d.Severity != "error" && strings.Contains(words(d.Summary), strings.ToLower(planwords.CheckSkipped))
}

// The provider's summaries, in internal/planwords' words. A warning about one group reads
// `Group "<name>" of "<stream>" <decision><figure>` (planwords.GroupSummary): decisions are the
// words after the names, each with the row it sorts into, matched longest first (so
// WillReplayOrSkip is not read as WillReplay). The figure is planwords.EntriesFigure after a
// replay or a skip. A stream to be created reads as planwords.StreamWillBeCreated, and a skipped
// check has planwords.CheckSkipped in its summary. TestPlanReview_SortsEveryWarning, in
// internal/systemtest, runs this tool on every summary the provider makes.
var decisions = map[planwords.Decision]kind{
	planwords.WillReplayOrSkip:  kindReplayOrSkip,
	planwords.WillReplay:        kindReplay,
	planwords.WillSkip:          kindSkip,
	planwords.WillBeAdopted:     kindAdopt,
	planwords.AdoptedNotCreated: kindAdopt,
	planwords.StartChangeAdopts: kindStartChange, // it adopts the group that is there
	planwords.WillStay:          kindStays,
	planwords.WillStayReplaced:  kindStays,
	planwords.LeftOnServer:      kindStays,
}

// decisionsLongestFirst is planwords.Decisions, longest words first.
var decisionsLongestFirst = func() []planwords.Decision {
	d := slices.Clone(planwords.Decisions)
	slices.SortStableFunc(d, func(a, b planwords.Decision) int { return cmp.Compare(len(b), len(a)) })
	return d
}()

var (
	groupWarning  = regexp.MustCompile(`^Group ("(?:[^"\\]|\\.)*") of ("(?:[^"\\]|\\.)*") (.*)$`)
	streamCreated = regexp.MustCompile(`^Stream "(?:[^"\\]|\\.)*" ` + regexp.QuoteMeta(planwords.StreamCreated) + `$`)
	entryFigure   = regexp.MustCompile(` (\d[\d,]*) Entr(?:y|ies)$`)
)

// classify reads what a diagnostic says about its group: the row it sorts into, the group and
// stream a group's warning names, and the entries it will replay or skip (-1 when none).
func classify(d diagnostic) (k kind, name, stream string, entries int64) {
	k, entries = kindOther, -1
	m := groupWarning.FindStringSubmatch(d.Summary)
	switch {
	case d.Severity == "error":
		k = kindError
	case m != nil:
		for _, d := range decisionsLongestFirst {
			if strings.HasPrefix(m[3], string(d)) {
				k = decisions[d]
				break
			}
		}
		if f := entryFigure.FindStringSubmatch(m[3]); f != nil && (k == kindReplay || k == kindReplayOrSkip || k == kindSkip) {
			if n, err := strconv.ParseInt(strings.ReplaceAll(f[1], ",", ""), 10, 64); err == nil {
				entries = n
			}
		}
	case streamCreated.MatchString(d.Summary):
		k = kindStreamCreated
	}
	if m != nil {
		name, _ = strconv.Unquote(m[1])
		stream, _ = strconv.Unquote(m[2])
	} else {
		name, stream = quoted(d)
	}
	return k, name, stream, entries
}

var (
	groupName  = regexp.MustCompile(`(?i)\bgroup ("(?:[^"\\]|\\.)*")`)
	streamName = regexp.MustCompile(`(?i)\b(?:of|stream) ("(?:[^"\\]|\\.)*")`)
)

// quoted is the group and stream that a diagnostic of another shape (an error) names in its
// summary or detail, when it names them.
func quoted(d diagnostic) (name, stream string) {
	text := d.Summary + "\n" + d.Detail
	if m := groupName.FindStringSubmatch(text); m != nil {
		name, _ = strconv.Unquote(m[1])
	}
	if m := streamName.FindStringSubmatch(text); m != nil {
		stream, _ = strconv.Unquote(m[1])
	}
	return name, stream
}

// reviewed reports whether a group goes in the main table: something was said about it, or
// it leaves state.
func (g *group) reviewed() bool {
	return g.kind < kindStreamCreated || g.kind == kindOther || g.action == "delete"
}

// markdown is the review: a headline of counts, the skipped check, the table of what to
// review, the quiet groups, and the diagnostics in full.
func (r *review) markdown() string {
	groups := make([]*group, 0, len(r.groups))
	for _, g := range r.groups {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(b.entries, a.entries), strings.Compare(a.address, b.address))
	})
	var listed, quiet []*group
	for _, g := range groups {
		if g.reviewed() {
			listed = append(listed, g)
		} else {
			quiet = append(quiet, g)
		}
	}

	var b strings.Builder
	b.WriteString("### " + resourceType + " plan review\n\n")
	b.WriteString(r.headline(groups) + "\n\n")
	for _, d := range r.skipped {
		quote(&b, d)
	}
	if len(r.skipped) > 0 {
		b.WriteString("The groups below with nothing said about them were not checked: this plan cannot say whether they " +
			"will replay, skip or be adopted. Plan again once the server answers.\n\n")
	}
	if errs := r.looseErrors(); len(errs) > 0 {
		for _, d := range errs {
			fmt.Fprintf(&b, "- error: **%s**: %s\n", text(d.Summary), text(firstSentence(d.Detail)))
		}
		b.WriteString("\n")
	}
	if len(listed) > 0 {
		table(&b, listed, len(r.skipped) > 0)
	}
	if len(quiet) > 0 {
		what := "nothing to replay, skip or adopt"
		if len(r.skipped) > 0 {
			what = "not checked"
		}
		more := "more"
		if len(listed) == 0 {
			more = "groups"
		}
		fmt.Fprintf(&b, "<details><summary>%d %s (%s)</summary>\n\n", len(quiet), more, what)
		table(&b, quiet, len(r.skipped) > 0)
		b.WriteString("</details>\n\n")
	}
	r.fullText(&b, groups)
	return b.String()
}

// looseErrors are the errors with no resource address: a configuration that does not
// parse, a provider that does not start.
func (r *review) looseErrors() []diagnostic {
	var errs []diagnostic
	for _, d := range r.loose {
		if d.Severity == "error" {
			errs = append(errs, d)
		}
	}
	return errs
}

// headline counts what the table holds, in the table's order.
func (r *review) headline(groups []*group) string {
	count := map[kind]int{}
	var replayed, skipped int64
	changes := 0
	for _, g := range groups {
		count[g.kind]++
		if g.action != "" {
			changes++
		}
		switch g.kind {
		case kindReplay:
			replayed += max(g.entries, 0)
		case kindSkip:
			skipped += max(g.entries, 0)
		}
	}
	var parts []string
	add := func(n int, format string, args ...any) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf(format, args...))
		}
	}
	errs := count[kindError] + len(r.looseErrors())
	add(errs, "**%s**", plural(errs, "error"))
	add(len(r.skipped), "**plan-time check skipped**")
	add(count[kindReplay], "**%s will replay %s in all**", plural(count[kindReplay], "group"), planwords.Entries(replayed))
	add(count[kindReplayOrSkip], "**%s will replay or skip** (start not known yet)", plural(count[kindReplayOrSkip], "group"))
	add(count[kindSkip], "**%s will skip %s in all**", plural(count[kindSkip], "group"), planwords.Entries(skipped))
	add(count[kindAdopt], "%s adopted", plural(count[kindAdopt], "group"))
	parts = append(parts, plural(changes, "planned change"))
	return strings.Join(parts, " · ")
}

// table lists groups; unchecked says the plan-time check was skipped, so that groups with
// nothing said were not checked rather than found quiet.
func table(b *strings.Builder, groups []*group, unchecked bool) {
	b.WriteString("| review | resource | plan | group | stream | entries |\n|---|---|---|---|---|---:|\n")
	for _, g := range groups {
		label := kindLabels[g.kind]
		if g.kind == kindNone && unchecked && g.action != "delete" {
			label = "not checked"
		}
		figure := ""
		if g.entries >= 0 {
			figure = planwords.Thousands(g.entries)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", label, code(g.address), g.action, code(g.name), code(g.stream), figure)
	}
	b.WriteString("\n")
}

// fullText lists every diagnostic with its detail, collapsed.
func (r *review) fullText(b *strings.Builder, groups []*group) {
	n := len(r.loose) // the skipped checks are quoted in full above
	for _, g := range groups {
		n += len(g.diags)
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "<details><summary>What the provider said (%s)</summary>\n\n", plural(n, "diagnostic"))
	for _, d := range r.loose {
		quote(b, d)
	}
	for _, g := range groups {
		for _, d := range g.diags {
			quote(b, d)
		}
	}
	b.WriteString("</details>\n")
}

func quote(b *strings.Builder, d diagnostic) {
	fmt.Fprintf(b, "**%s: %s**%s\n\n", d.Severity, text(d.Summary), inAddress(d))
	for line := range strings.SplitSeq(strings.TrimSpace(d.Detail), "\n") {
		fmt.Fprintf(b, "> %s\n", text(line))
	}
	b.WriteString("\n")
}

// text keeps the provider's words from being read as HTML (`<stream>/<name>`).
func text(s string) string { return strings.ReplaceAll(s, "<", "&lt;") }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func inAddress(d diagnostic) string {
	if a := addressOf(d); a != "" {
		return " (" + code(a) + ")"
	}
	return ""
}

// code is s as inline code, or nothing when s is empty. A backtick in s widens the fence.
func code(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// firstSentence is the detail up to its first full stop that ends a sentence.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
