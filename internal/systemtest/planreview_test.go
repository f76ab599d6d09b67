package systemtest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/planwords"
)

// TestPlanReview_SortsEveryWarning holds tools/planreview to the summaries the provider writes
// (both take their words from internal/planwords): it runs the tool on a -json stream with one
// warning of every decision, made by planwords.GroupSummary, and the per-stream and plan-wide
// warnings, and checks the row, group, stream and entries the review gives each. It fails when
// a decision is added without a row in the review.
func TestPlanReview_SortsEveryWarning(t *testing.T) {
	t.Parallel()
	rows := map[planwords.Decision]string{ // the label of the review's row for each decision
		planwords.WillReplay:        "**replays**",
		planwords.WillSkip:          "**skips**",
		planwords.WillReplayOrSkip:  "**replays or skips**",
		planwords.WillBeAdopted:     "adopts",
		planwords.AdoptedNotCreated: "adopts",
		planwords.StartChangeAdopts: "start change, not moved",
		planwords.WillStay:          "stays on server",
		planwords.WillStayReplaced:  "stays on server",
		planwords.LeftOnServer:      "stays on server",
	}
	figures := map[planwords.Decision]struct{ summary, entries string }{
		planwords.WillReplay:       {planwords.EntriesFigure(12000), "12,000"},
		planwords.WillSkip:         {planwords.EntriesFigure(1), "1"},
		planwords.WillReplayOrSkip: {planwords.EntriesFigure(7), "7"},
		planwords.WillBeAdopted:    {planwords.LagFigure(planwords.LagUnknown), ""},
	}
	// Names in quotes are names, not words: a group called "will skip" is not a skip.
	const stream = `emq:{orders}:stream "replay"`
	var lines []string
	want := map[string]string{} // address -> the row the review must hold
	message := func(v map[string]any) {
		b, err := json.Marshal(v)
		acctest.MustDo(t, err)
		lines = append(lines, string(b))
	}
	warning := func(address, summary string) {
		message(map[string]any{"type": "diagnostic", "diagnostic": map[string]any{
			"severity": "warning", "summary": summary, "detail": "The provider's words.", "address": address}})
	}
	for i, d := range planwords.Decisions {
		row, ok := rows[d]
		if !ok {
			t.Errorf("decision %q has no row in the review: add one here and teach tools/planreview its words", d)
			continue
		}
		name, address := fmt.Sprintf("g%d will skip", i), fmt.Sprintf(`valkey_stream_group.g[%d]`, i)
		message(map[string]any{"type": "planned_change", "change": map[string]any{
			"resource": map[string]any{"addr": address, "resource_type": "valkey_stream_group"}, "action": "create"}})
		warning(address, planwords.GroupSummary(stream, name, d, figures[d].summary))
		want[address] = fmt.Sprintf("| %s | `%s` | create | `%s` | `%s` | %s |", row, address, name, stream, figures[d].entries)
	}
	warning(`valkey_stream_group.s`, planwords.StreamWillBeCreated(stream))
	want[`valkey_stream_group.s`] = fmt.Sprintf("| creates stream | `valkey_stream_group.s` |  |  | `%s` |  |", stream)
	skipped := []string{planwords.PlanCheckSkipped, planwords.StreamCheckSkipped(stream), planwords.ReplayCheckSkipped}
	for _, summary := range skipped {
		warning(`valkey_stream_group.s`, summary)
	}

	bin := filepath.Join(t.TempDir(), "planreview")
	if out, err := exec.Command("go", "build", "-o", bin, "../../tools/planreview").CombinedOutput(); err != nil {
		t.Fatalf("go build tools/planreview: %v\n%s", err, out)
	}
	review := exec.Command(bin)
	review.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := review.Output()
	if err != nil {
		t.Fatalf("planreview: %v", err)
	}
	md := string(out)
	for address, row := range want {
		if !strings.Contains(md, row+"\n") {
			t.Errorf("the review has no row %s for %s:\n%s", row, address, md)
		}
	}
	for _, summary := range skipped {
		if !strings.Contains(md, fmt.Sprintf("**warning: %s** (`valkey_stream_group.s`)\n", summary)) {
			t.Errorf("the review does not quote the skipped check %q first:\n%s", summary, md)
		}
	}
}
