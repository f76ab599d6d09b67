package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// What a plan says about group_start, the one decision that cannot be taken back: how many
// entries a new group will replay (head) or never see (new).

// entriesSeed is three entries whose IDs name known times.
var entriesSeed = []string{"1700000000000-0", "1700000000001-0", "1700000060000-5"}

const (
	firstEntry = "from 1700000000000-0 (2023-11-14 22:13:20.000 UTC)"
	lastEntry  = "to 1700000060000-5 (2023-11-14 22:14:20.000 UTC)"
)

func TestStreamGroupModifyPlan_saysWhatGroupStartReplaysOrSkips(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, start string
		seed        func(t *testing.T, stream string)
		check       func(t *testing.T, diags []cliDiagnostic, stream string)
	}{
		{"head on a stream with entries", "head", seedEntries, func(t *testing.T, diags []cliDiagnostic, stream string) {
			expectWarning(t, diags, replaySummary, 1, fmt.Sprintf("Group %q will be created on stream %q", "billing", stream),
				`group_start = "head"`, "handed the 3 entries already in the stream", firstEntry, lastEntry, `group_start = "new"`)
			expectWarning(t, diags, skipSummary, 0)
		}},
		{"new on a stream with entries", "new", seedEntries, func(t *testing.T, diags []cliDiagnostic, stream string) {
			expectWarning(t, diags, skipSummary, 1, fmt.Sprintf("Group %q will be created on stream %q", "billing", stream),
				"the 3 entries already in the stream", firstEntry, lastEntry, "will never be delivered to it",
				"only entries appended after the apply will be")
			expectWarning(t, diags, replaySummary, 0)
		}},
		{"empty stream", "head", func(t *testing.T, stream string) {
			mustDo(t, testAdmin(t, testServer(t)).XGroupCreateMkStream(context.Background(), stream, "other", "$").Err())
		}, func(t *testing.T, diags []cliDiagnostic, _ string) {
			expectWarning(t, diags, replaySummary, 0)
			expectWarning(t, diags, streamCreatedSummary, 0)
		}},
		{"absent stream", "head", func(*testing.T, string) {}, func(t *testing.T, diags []cliDiagnostic, stream string) {
			expectWarning(t, diags, replaySummary, 0)
			expectWarning(t, diags, streamCreatedSummary, 1, stream)
		}},
		{"existing group", "head", func(t *testing.T, stream string) {
			seedEntries(t, stream)
			mustDo(t, testAdmin(t, testServer(t)).XGroupCreate(context.Background(), stream, "billing", "$").Err())
		}, func(t *testing.T, diags []cliDiagnostic, _ string) {
			expectWarning(t, diags, willAdoptSummary, 1, "will not move its read position")
			expectWarning(t, diags, replaySummary, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream := testKey(t)
			tc.seed(t, stream)
			tc.check(t, newPlanPreview(t, map[string]string{"url": testServer(t).URL()}).create(stream, tc.start), stream)
		})
	}
}

// TestCLIStreamGroup_replayWarningsOnePerGroupOneRoundTripPerStream: ten groups on one stream
// each get their own warning (each makes its own decision), and the plan asks the server once
// for that stream, counted on the wire as the bench does.
func TestCLIStreamGroup_replayWarningsOnePerGroupOneRoundTripPerStream(t *testing.T) {
	t.Parallel()
	stream := testKey(t)
	seedEntries(t, stream)
	proxy := faultproxy.StartProxyT(t, testServer(t).Addr())
	config := fmt.Sprintf("provider \"valkey\" {\n  url = %q\n}\n", "valkey://"+proxy.Addr()+"/0")
	for i := range 10 {
		start := []string{"head", "new"}[i%2]
		config += testAccNamedGroupConfig(fmt.Sprintf("g%d", i), stream, fmt.Sprintf("g%d", i), start)
	}
	diags := newCLIRun(t, config).plan().must(t, true).diags
	expectWarning(t, diags, replaySummary, 5, "3 entries")
	expectWarning(t, diags, skipSummary, 5, "3 entries")
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
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	seedEntries(t, stream)
	mustDo(t, rdb.XGroupCreate(ctx, stream, "existing", "$").Err())
	user, pw := testServer(t).ACLUser(t, valkeytest.TagPattern(stream), "+xinfo|groups +type")
	config := fmt.Sprintf("provider \"valkey\" {\n  url      = %q\n  username = %q\n  password = %q\n}\n", testServer(t).URL(), user, pw) +
		testAccStreamGroupConfig(stream, "existing", "new") +
		testAccNamedGroupConfig("billing", stream, "billing", "head") +
		testAccNamedGroupConfig("audit", stream, "audit", "new")
	diags := newCLIRun(t, config).plan().must(t, true).diags
	expectWarning(t, diags, "Replay Check Skipped", 1, stream, "+xinfo|stream", "NOPERM")
	expectWarning(t, diags, willAdoptSummary, 1, "existing")
	expectWarning(t, diags, replaySummary, 0)
	expectWarning(t, diags, skipSummary, 0)
	expectWarning(t, diags, checkSkippedSummary, 0)
}

// TestCLIStreamGroup_renameOnAStreamWithEntriesWarns: a replacement that creates a group (a new
// name) makes the same decision as a create, and the plan says so.
func TestCLIStreamGroup_renameOnAStreamWithEntriesWarns(t *testing.T) {
	t.Parallel()
	stream := testKey(t)
	r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "billing", "head"))
	r.apply().must(t, true)
	seedEntries(t, stream)
	r.write(testAccProviderConfig(testServer(t)) + testAccStreamGroupConfig(stream, "invoicing", "head"))
	diags := r.plan().must(t, true).diags
	expectWarning(t, diags, replacedSummary, 1, `group "billing"`)
	expectWarning(t, diags, replaySummary, 1, fmt.Sprintf("Group %q will be created", "invoicing"), "3 entries", firstEntry)
}

// TestStreamGroupModifyPlan_unknownGroupStartNamesBothOutcomes: a group_start known only at
// apply must not be read as "new": the plan names what each value would do.
func TestStreamGroupModifyPlan_unknownGroupStartNamesBothOutcomes(t *testing.T) {
	t.Parallel()
	stream := testKey(t)
	seedEntries(t, stream)
	diags := newPlanPreview(t, map[string]string{"url": testServer(t).URL()}).create(stream, tftypes.UnknownValue)
	expectWarning(t, diags, replayOrSkipSummary, 1, "group_start is not known yet",
		`"head" would hand every one of them`, `"new" would never deliver them`, "3 entries", firstEntry, lastEntry)
	expectWarning(t, diags, replaySummary, 0)
	expectWarning(t, diags, skipSummary, 0)
}

// TestCLIStreamGroup_refusedStreamLeavesOtherStreamsChecked: a refusal about one stream (the
// user may not read its key) is said for that stream; the other streams are still checked.
func TestCLIStreamGroup_refusedStreamLeavesOtherStreamsChecked(t *testing.T) {
	t.Parallel()
	readable, forbidden := testKey(t), testKey(t)
	seedEntries(t, readable)
	user, pw := testServer(t).ACLUser(t, valkeytest.TagPattern(readable), valkeytest.MinimalACL)
	config := fmt.Sprintf("provider \"valkey\" {\n  url      = %q\n  username = %q\n  password = %q\n}\n", testServer(t).URL(), user, pw)
	for i, stream := range []string{readable, forbidden, forbidden, forbidden} {
		config += testAccNamedGroupConfig(fmt.Sprintf("g%d", i), stream, fmt.Sprintf("g%d", i), "head")
	}
	diags := newCLIRun(t, config).plan().must(t, true).diags
	expectWarning(t, diags, replaySummary, 1, fmt.Sprintf("Group %q will be created on stream %q", "g0", readable))
	expectWarning(t, diags, streamSkippedSummary, 1, fmt.Sprintf("planned groups of stream %q", forbidden), "NOPERM")
}

func seedEntries(t *testing.T, stream string) {
	valkeytest.XAdd(t, testAdmin(t, testServer(t)), stream, entriesSeed...)
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
