// Package diagtest holds the provider's diagnostics as tests read them, from the CLI's -json
// stream or from a direct call of the provider's code, and the checks on them that the tests of
// internal/provider and internal/systemtest share.
package diagtest

import (
	"regexp"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-framework/path"
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

// Summaries of the provider's per-group warnings, as patterns: each names its group and stream
// (so that Terraform's terminal output never folds them), and these match any group.
const (
	ReplaySummary        = `^Group ".*" of ".*" Will Replay [0-9,]+ Entr(y|ies)$`
	SkipSummary          = `^Group ".*" of ".*" Will Skip [0-9,]+ Entr(y|ies)$`
	ReplayOrSkipSummary  = `^Group ".*" of ".*" Will Replay Or Skip [0-9,]+ Entr(y|ies)$`
	WillAdoptSummary     = `^Group ".*" of ".*" Will Be Adopted, Lag \S+$`
	AdoptedSummary       = `^Group ".*" of ".*" Adopted, Not Created$`
	StreamCreatedSummary = `^Stream ".*" Will Be Created$`
	WillStaySummary      = `^Group ".*" of ".*" Will Stay On Server$`
	LeftSummary          = `^Group ".*" of ".*" Left On Server$`
	ReplacedSummary      = `^Group ".*" of ".*" Will Stay On Server After Its Replacement$`
	StartChangeSummary   = `^Group ".*" of ".*" Will Not Move: Start Change Adopts It$`
	CheckSkippedSummary  = "Plan-Time Group Check Skipped"
	StreamSkippedSummary = `^Plan-Time Group Check Skipped For Stream ".*"$`
)

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
