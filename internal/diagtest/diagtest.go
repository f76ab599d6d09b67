// Package diagtest holds the provider's diagnostics as tests read them, from the CLI's -json
// stream or from a direct call of the provider's code, and the checks on them that the tests of
// internal/provider and internal/systemtest share.
package diagtest

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/echomq/terraform-provider-valkey/internal/planwords"
)

// Diagnostic is one diagnostic the CLI printed: terraform-json's, with the resource address
// that the -json stream adds to a resource's diagnostics (terraform-json v0.27 does not read it).
// A diagnostic of a direct call has the attribute path it carries instead (nil for none) and no
// address.
type Diagnostic struct {
	tfjson.Diagnostic
	Address   string     `json:"address"`
	Attribute *path.Path `json:"-"` // of a direct call's diagnostic
}

// Summaries of the provider's warnings, as patterns built from internal/planwords' own
// summaries, so that they follow its words: each per-group one names its group and stream (so
// that Terraform's terminal output never folds them), and these match any group and stream.
var (
	ReplaySummary        = groupPattern(planwords.WillReplay, anyEntries)
	SkipSummary          = groupPattern(planwords.WillSkip, anyEntries)
	ReplayOrSkipSummary  = groupPattern(planwords.WillReplayOrSkip, anyEntries)
	WillAdoptSummary     = groupPattern(planwords.WillBeAdopted, anyLag)
	AdoptedSummary       = groupPattern(planwords.AdoptedNotCreated, "")
	StreamCreatedSummary = pattern(planwords.StreamWillBeCreated(anyName), "")
	WillStaySummary      = groupPattern(planwords.WillStay, "")
	LeftSummary          = groupPattern(planwords.LeftOnServer, "")
	ReplacedSummary      = groupPattern(planwords.WillStayReplaced, "")
	StartChangeSummary   = groupPattern(planwords.StartChangeAdopts, "")
	CheckSkippedSummary  = planwords.PlanCheckSkipped
	StreamSkippedSummary = pattern(planwords.StreamCheckSkipped(anyName), "")
)

// Stand-ins for what varies, in a summary planwords makes to be turned into a pattern.
const (
	anyName   = "\x00name"   // a group or a stream, which planwords quotes
	anyFigure = "\x00figure" // a group's figure
	anyValue  = "\x00value"  // the value in a figure
)

// The figures' patterns: EntriesFigure of any count (1 Entry, 1,200 Entries), LagFigure of any lag.
var (
	anyEntries = "(" + anyCount(1) + "|" + anyCount(2) + ")"
	anyLag     = strings.Replace(regexp.QuoteMeta(planwords.LagFigure(anyValue)), anyValue, `\S+`, 1)
)

// anyCount is EntriesFigure(n) as a pattern of any count written in the words of n's.
func anyCount(n int64) string {
	return strings.Replace(regexp.QuoteMeta(planwords.EntriesFigure(n)), strconv.FormatInt(n, 10), "[0-9,]+", 1)
}

// groupPattern matches planwords.GroupSummary of any group and stream with decision d and a
// figure that matches the pattern figure ("" for none).
func groupPattern(d planwords.Decision, figure string) string {
	return pattern(planwords.GroupSummary(anyName, anyName, d, anyFigure), figure)
}

// pattern matches the whole of summary, made with the stand-ins, for any name in place of
// anyName and any text that matches figure in place of anyFigure.
func pattern(summary, figure string) string {
	quoted := regexp.QuoteMeta(strconv.Quote(anyName))
	return "^" + strings.NewReplacer(quoted, `".*"`, anyFigure, figure).Replace(regexp.QuoteMeta(summary)) + "$"
}

// Find returns the diagnostics with the given severity and summary; a summary that starts
// with "^" is a regular expression (the patterns above).
func Find(diags []Diagnostic, severity tfjson.DiagnosticSeverity, summary string) []Diagnostic {
	match := func(s string) bool { return s == summary }
	if strings.HasPrefix(summary, "^") {
		match = regexp.MustCompile(summary).MatchString
	}
	var found []Diagnostic
	for _, d := range diags {
		if d.Severity == severity && match(d.Summary) {
			found = append(found, d)
		}
	}
	return found
}

// ExpectWarning fails unless exactly want warnings with summary appear, each mentioning every
// fragment in its detail, and each on its resource with no place in the configuration
// (warnOnResource): the CLI gives it the resource's address and no range or snippet, and a
// direct call shows an attribute path of no steps. That keeps Terraform from parsing the
// configuration again for each warning, and from folding them. A Delete's warning has no
// address either: Terraform applies a destroy without the resource's configuration.
func ExpectWarning(t testing.TB, diags []Diagnostic, summary string, want int, fragments ...string) {
	t.Helper()
	found := Find(diags, tfjson.DiagnosticSeverityWarning, summary)
	if len(found) != want {
		t.Fatalf("%d warnings %q, want %d; diagnostics: %+v", len(found), summary, want, diags)
	}
	for _, d := range found {
		switch {
		case d.Attribute != nil && !d.Attribute.Equal(path.Empty()):
			t.Errorf("warning %q is on attribute %s, want the resource (a path of no steps)", d.Summary, d.Attribute)
		case d.Attribute == nil && (d.Address == "" && summary != LeftSummary || d.Range != nil || d.Snippet != nil):
			t.Errorf("warning %q has address %q and range %+v, want the resource's address and no range", d.Summary, d.Address, d.Range)
		}
		for _, f := range fragments {
			if !strings.Contains(Unwrap(d.Detail), f) {
				t.Errorf("warning %q detail %q does not mention %q", summary, d.Detail, f)
			}
		}
	}
}

// Unwrap joins the detail's lines, which Terraform may wrap.
func Unwrap(s string) string { return strings.Join(strings.Fields(s), " ") }
