package diagtest

import (
	"testing"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/echomq/terraform-provider-valkey/internal/planwords"
)

// TestSummaries_EachPatternMatchesItsWarningOnly holds the patterns to planwords: each matches
// the summaries planwords makes for its warning, with names that hold quotes and the words of
// other decisions, and no other warning's summary.
func TestSummaries_EachPatternMatchesItsWarningOnly(t *testing.T) {
	const stream, name = `emq:{orders} "Will Skip 3 Entries"`, "Will Replay 1 Entry"
	group := func(d planwords.Decision, figure string) string {
		return planwords.GroupSummary(stream, name, d, figure)
	}
	summaries := map[string][]string{
		ReplaySummary:        {group(planwords.WillReplay, planwords.EntriesFigure(1)), group(planwords.WillReplay, planwords.EntriesFigure(12000))},
		SkipSummary:          {group(planwords.WillSkip, planwords.EntriesFigure(3))},
		ReplayOrSkipSummary:  {group(planwords.WillReplayOrSkip, planwords.EntriesFigure(1234567))},
		WillAdoptSummary:     {group(planwords.WillBeAdopted, planwords.LagFigure("3")), group(planwords.WillBeAdopted, planwords.LagFigure(planwords.LagUnknown))},
		AdoptedSummary:       {group(planwords.AdoptedNotCreated, "")},
		StreamCreatedSummary: {planwords.StreamWillBeCreated(stream)},
		WillStaySummary:      {group(planwords.WillStay, "")},
		LeftSummary:          {group(planwords.LeftOnServer, "")},
		ReplacedSummary:      {group(planwords.WillStayReplaced, "")},
		StartChangeSummary:   {group(planwords.StartChangeAdopts, "")},
		CheckSkippedSummary:  {planwords.PlanCheckSkipped},
		StreamSkippedSummary: {planwords.StreamCheckSkipped(stream)},
	}
	if len(summaries) != 12 {
		t.Fatalf("%d distinct patterns, want 12: two warnings share one", len(summaries))
	}
	for pattern := range summaries {
		for owner, owned := range summaries {
			for _, s := range owned {
				d := Diagnostic{Diagnostic: tfjson.Diagnostic{Severity: tfjson.DiagnosticSeverityWarning, Summary: s}}
				if got := len(Find([]Diagnostic{d}, tfjson.DiagnosticSeverityWarning, pattern)) == 1; got != (pattern == owner) {
					t.Errorf("pattern %s matches %q: %v, want %v", pattern, s, got, pattern == owner)
				}
			}
		}
	}
}
