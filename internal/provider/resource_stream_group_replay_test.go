package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// What a plan says about group_start, the one decision that cannot be taken back: how many
// entries a new group will replay (head) or never see (new).

const (
	replaySummary = "New Group Will Replay Existing Entries"
	skipSummary   = "New Group Will Skip Existing Entries"
)

// entriesSeed is three entries whose IDs name known times.
var entriesSeed = []string{"1700000000000-0", "1700000000001-0", "1700000060000-5"}

const (
	firstEntry = "from 1700000000000-0 (2023-11-14 22:13:20.000 UTC)"
	lastEntry  = "to 1700000060000-5 (2023-11-14 22:14:20.000 UTC)"
)

// expectOnGroupStart fails unless every diagnostic with summary points at group_start.
func expectOnGroupStart(t *testing.T, diags []cliDiagnostic, summary string) {
	t.Helper()
	for _, d := range findDiagnostic(diags, "warning", summary) {
		if !strings.Contains(d.Snippet.Code, "group_start") {
			t.Errorf("warning %q points at %q, want the group_start line", summary, d.Snippet.Code)
		}
	}
}

func TestCLIStreamGroup_planSaysWhatGroupStartReplaysOrSkips(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, start string
		seed        func(t *testing.T, stream string)
		check       func(t *testing.T, diags []cliDiagnostic, stream string)
	}{
		{"head on a stream with entries", "head", seedEntries, func(t *testing.T, diags []cliDiagnostic, stream string) {
			expectWarning(t, diags, replaySummary, 1, fmt.Sprintf("Group %q will be created on stream %q", "billing", stream),
				`group_start = "head"`, "handed the 3 entries already in the stream", firstEntry, lastEntry, `group_start = "new"`)
			expectOnGroupStart(t, diags, replaySummary)
			expectWarning(t, diags, skipSummary, 0)
		}},
		{"new on a stream with entries", "new", seedEntries, func(t *testing.T, diags []cliDiagnostic, stream string) {
			expectWarning(t, diags, skipSummary, 1, fmt.Sprintf("Group %q will be created on stream %q", "billing", stream),
				"the 3 entries already in the stream", firstEntry, lastEntry, "will never be delivered to it",
				"only entries appended after the apply will be")
			expectOnGroupStart(t, diags, skipSummary)
			expectWarning(t, diags, replaySummary, 0)
		}},
		{"empty stream", "head", func(t *testing.T, stream string) {
			mustDo(t, testAdmin(t, testServer(t)).XGroupCreateMkStream(context.Background(), stream, "other", "$").Err())
		}, func(t *testing.T, diags []cliDiagnostic, _ string) {
			expectWarning(t, diags, replaySummary, 0)
			expectWarning(t, diags, "Stream Will Be Created", 0)
		}},
		{"absent stream", "head", func(*testing.T, string) {}, func(t *testing.T, diags []cliDiagnostic, stream string) {
			expectWarning(t, diags, replaySummary, 0)
			expectWarning(t, diags, "Stream Will Be Created", 1, stream)
		}},
		{"existing group", "head", func(t *testing.T, stream string) {
			seedEntries(t, stream)
			mustDo(t, testAdmin(t, testServer(t)).XGroupCreate(context.Background(), stream, "billing", "$").Err())
		}, func(t *testing.T, diags []cliDiagnostic, _ string) {
			expectWarning(t, diags, "Consumer Group Will Be Adopted", 1, "will not move its read position")
			expectWarning(t, diags, replaySummary, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream := testKey(t)
			tc.seed(t, stream)
			r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "billing", tc.start))
			tc.check(t, r.run(true, "plan"), stream)
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
	proxy := valkeytest.StartProxyT(t, testServer(t).Addr())
	config := fmt.Sprintf("provider \"valkey\" {\n  url = %q\n}\n", "valkey://"+proxy.Addr()+"/0")
	for i := range 10 {
		start := []string{"head", "new"}[i%2]
		config += fmt.Sprintf("\nresource \"valkey_stream_group\" \"g%d\" {\n  stream      = %q\n  name        = \"g%d\"\n  group_start = %q\n}\n", i, stream, i, start)
	}
	r := newCLIRun(t, config)
	diags := r.run(true, "plan")
	expectWarning(t, diags, replaySummary, 5, "3 entries")
	expectWarning(t, diags, skipSummary, 5, "3 entries")
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
		strings.Replace(testAccStreamGroupConfig(stream, "billing", "head"), `"test"`, `"billing"`, 1) +
		strings.Replace(testAccStreamGroupConfig(stream, "audit", "new"), `"test"`, `"audit"`, 1)
	diags := newCLIRun(t, config).run(true, "plan")
	expectWarning(t, diags, "Replay Check Skipped", 1, stream, "+xinfo|stream", "NOPERM")
	expectWarning(t, diags, "Consumer Group Will Be Adopted", 1, "existing")
	expectWarning(t, diags, replaySummary, 0)
	expectWarning(t, diags, skipSummary, 0)
	expectWarning(t, diags, "Plan-Time Group Check Skipped", 0)
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
