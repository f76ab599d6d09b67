package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
)

// What a plan says about group_start, the one decision that cannot be taken back: how many
// entries a new group will replay (head) or never see (new).

func TestStreamGroupModifyPlan_saysWhatGroupStartReplaysOrSkips(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, start string
		seed        func(t *testing.T, stream string)
		check       func(t *testing.T, diags []diagtest.Diagnostic, stream string)
	}{
		{"head on a stream with entries", "head", acctest.SeedEntries, func(t *testing.T, diags []diagtest.Diagnostic, stream string) {
			diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 1, fmt.Sprintf("Group %q will be created on stream %q", "billing", stream),
				`group_start = "head"`, "handed the 3 entries already in the stream", acctest.FirstEntry, acctest.LastEntry, `group_start = "new"`)
			diagtest.ExpectWarning(t, diags, diagtest.SkipSummary, 0)
		}},
		{"new on a stream with entries", "new", acctest.SeedEntries, func(t *testing.T, diags []diagtest.Diagnostic, stream string) {
			diagtest.ExpectWarning(t, diags, diagtest.SkipSummary, 1, fmt.Sprintf("Group %q will be created on stream %q", "billing", stream),
				"the 3 entries already in the stream", acctest.FirstEntry, acctest.LastEntry, "will never be delivered to it",
				"only entries appended after the apply will be")
			diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 0)
		}},
		{"empty stream", "head", func(t *testing.T, stream string) {
			acctest.MustDo(t, acctest.Admin(t, acctest.Server(t)).XGroupCreateMkStream(context.Background(), stream, "other", "$").Err())
		}, func(t *testing.T, diags []diagtest.Diagnostic, _ string) {
			diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 0)
			diagtest.ExpectWarning(t, diags, diagtest.StreamCreatedSummary, 0)
		}},
		{"absent stream", "head", func(*testing.T, string) {}, func(t *testing.T, diags []diagtest.Diagnostic, stream string) {
			diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 0)
			diagtest.ExpectWarning(t, diags, diagtest.StreamCreatedSummary, 1, stream)
		}},
		{"existing group", "head", func(t *testing.T, stream string) {
			acctest.SeedEntries(t, stream)
			acctest.MustDo(t, acctest.Admin(t, acctest.Server(t)).XGroupCreate(context.Background(), stream, "billing", "$").Err())
		}, func(t *testing.T, diags []diagtest.Diagnostic, _ string) {
			diagtest.ExpectWarning(t, diags, diagtest.WillAdoptSummary, 1, "will not move its read position")
			diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream := acctest.StreamKey(t)
			tc.seed(t, stream)
			tc.check(t, newPlanPreview(t, map[string]string{"url": acctest.Server(t).URL()}).create(stream, tc.start), stream)
		})
	}
}

// TestStreamGroupModifyPlan_unknownGroupStartNamesBothOutcomes: a group_start known only at
// apply must not be read as "new": the plan names what each value would do.
func TestStreamGroupModifyPlan_unknownGroupStartNamesBothOutcomes(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	acctest.SeedEntries(t, stream)
	diags := newPlanPreview(t, map[string]string{"url": acctest.Server(t).URL()}).create(stream, tftypes.UnknownValue)
	diagtest.ExpectWarning(t, diags, diagtest.ReplayOrSkipSummary, 1, "group_start is not known yet",
		`"head" would hand every one of them`, `"new" would never deliver them`, "3 entries", acctest.FirstEntry, acctest.LastEntry)
	diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 0)
	diagtest.ExpectWarning(t, diags, diagtest.SkipSummary, 0)
}
