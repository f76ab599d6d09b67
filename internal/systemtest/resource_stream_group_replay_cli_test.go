package systemtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// group_start's replay and skip warnings on the real CLI, where many groups share one plan.
// What one group's plan says is checked by calling ModifyPlan directly, in internal/provider.

// TestCLIStreamGroup_replayWarningsOnePerGroupOneRoundTripPerStream: ten groups on one stream
// each get their own warning (each makes its own decision), and the plan asks the server once
// for that stream, counted on the wire as the bench does.
func TestCLIStreamGroup_replayWarningsOnePerGroupOneRoundTripPerStream(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	acctest.SeedEntries(t, stream)
	proxy := faultproxy.StartProxyT(t, acctest.Server(t).Addr())
	config := fmt.Sprintf("provider \"valkey\" {\n  url = %q\n}\n", "valkey://"+proxy.Addr()+"/0")
	for i := range 10 {
		start := []string{"head", "new"}[i%2]
		config += acctest.NamedGroupConfig(fmt.Sprintf("g%d", i), stream, fmt.Sprintf("g%d", i), start)
	}
	diags := newCLIRun(t, config).plan().must(t, true).diags
	diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 5, "3 entries")
	diagtest.ExpectWarning(t, diags, diagtest.SkipSummary, 5, "3 entries")
	for i := range 10 { // each group its own warning, not one group ten times
		named := 0
		for _, d := range diags {
			if strings.Contains(d.Detail, fmt.Sprintf("Group %q will be created", fmt.Sprintf("g%d", i))) {
				named++
			}
		}
		if named != 1 {
			t.Errorf("group g%d is named by %d warnings, want 1", i, named)
		}
	}
	trips, _ := proxy.Take()
	if trips["XINFO GROUPS + XINFO STREAM"] != 1 {
		t.Errorf("round trips by what they carried: %v; want exactly one XINFO GROUPS + XINFO STREAM for the stream", trips)
	}
	for carried, n := range trips {
		if carried != "HELLO" && carried != "XINFO GROUPS + XINFO STREAM" {
			t.Errorf("%d more round trips carried %s", n, carried)
		}
	}
}

// TestCLIStreamGroup_planWithoutXinfoStreamWarnsOnce: a planning user with only the read
// permissions the adoption check needs still plans, with one warning that says what to grant.
func TestCLIStreamGroup_planWithoutXinfoStreamWarnsOnce(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	acctest.SeedEntries(t, stream)
	acctest.MustDo(t, rdb.XGroupCreate(ctx, stream, "existing", "$").Err())
	user, pw := acctest.Server(t).ACLUser(t, valkeytest.TagPattern(stream), "+xinfo|groups +type")
	config := acctest.ProviderUserConfig(acctest.Server(t), user, pw) +
		acctest.StreamGroupConfig(stream, "existing", "new") +
		acctest.NamedGroupConfig("billing", stream, "billing", "head") +
		acctest.NamedGroupConfig("audit", stream, "audit", "new")
	diags := newCLIRun(t, config).plan().must(t, true).diags
	diagtest.ExpectWarning(t, diags, planwords.ReplayCheckSkipped, 1, stream, "+xinfo|stream", "NOPERM")
	diagtest.ExpectWarning(t, diags, diagtest.WillAdoptSummary, 1, "existing")
	diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 0)
	diagtest.ExpectWarning(t, diags, diagtest.SkipSummary, 0)
	diagtest.ExpectWarning(t, diags, diagtest.CheckSkippedSummary, 0)
}

// TestCLIStreamGroup_renameOnAStreamWithEntriesWarns: a replacement that creates a group (a new
// name) makes the same decision as a create, and the plan says so.
func TestCLIStreamGroup_renameOnAStreamWithEntriesWarns(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "head"))
	r.apply().must(t, true)
	acctest.SeedEntries(t, stream)
	r.write(acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "invoicing", "head"))
	diags := r.plan().must(t, true).diags
	diagtest.ExpectWarning(t, diags, diagtest.ReplacedSummary, 1, `group "billing"`)
	diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 1, fmt.Sprintf("Group %q will be created", "invoicing"), "3 entries", acctest.FirstEntry)
}

// TestCLIStreamGroup_refusedStreamLeavesOtherStreamsChecked: a refusal about one stream (the
// user may not read its key) is said for that stream; the other streams are still checked.
func TestCLIStreamGroup_refusedStreamLeavesOtherStreamsChecked(t *testing.T) {
	t.Parallel()
	readable, forbidden := acctest.StreamKey(t), acctest.StreamKey(t)
	acctest.SeedEntries(t, readable)
	user, pw := acctest.Server(t).ACLUser(t, valkeytest.TagPattern(readable), valkeytest.MinimalACL)
	config := acctest.ProviderUserConfig(acctest.Server(t), user, pw)
	for i, stream := range []string{readable, forbidden, forbidden, forbidden} {
		config += acctest.NamedGroupConfig(fmt.Sprintf("g%d", i), stream, fmt.Sprintf("g%d", i), "head")
	}
	diags := newCLIRun(t, config).plan().must(t, true).diags
	diagtest.ExpectWarning(t, diags, diagtest.ReplaySummary, 1, fmt.Sprintf("Group %q will be created on stream %q", "g0", readable))
	diagtest.ExpectWarning(t, diags, diagtest.StreamSkippedSummary, 1, fmt.Sprintf("planned groups of stream %q", forbidden), "NOPERM")
}
