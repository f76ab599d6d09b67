package systemtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

func TestCLIStreamGroup_adoptionWarnsInPlanAndApplyWithPosition(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	valkeytest.XAdd(t, rdb, stream, "42-7", "43-0")
	if err := rdb.XGroupCreate(ctx, stream, "billing", "42-7").Err(); err != nil {
		t.Fatal(err)
	}
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "head"))

	diags := r.plan().must(t, true).diags
	diagtest.ExpectWarning(t, diags, diagtest.WillAdoptSummary, 1,
		fmt.Sprintf("Group %q already exists on stream %q", "billing", stream),
		`group_start "head" will not move its read position`, "last-delivered-id 42-7 with lag 1")
	diagtest.ExpectWarning(t, diags, diagtest.StreamCreatedSummary, 0)
	applied := r.apply().must(t, true).diags
	diagtest.ExpectWarning(t, applied, diagtest.AdoptedSummary, 1,
		fmt.Sprintf("%q already existed on stream %q", "billing", stream), "adopted as it is, at last-delivered-id 42-7 with lag 1",
		"cannot tell who created it", "an earlier apply whose reply was lost")
	// Create saw BUSYGROUP and nothing more: it does not claim the start was not applied.
	for _, d := range diagtest.Find(applied, tfjson.DiagnosticSeverityWarning, diagtest.AdoptedSummary) {
		if strings.Contains(d.Detail, "was not applied") {
			t.Errorf("the adoption warning claims what Create cannot know: %s", d.Detail)
		}
	}
	if g, _, _ := valkeytest.Group(rdb, stream, "billing"); g.LastDeliveredID != "42-7" {
		t.Errorf("planning and adopting moved the group to %s", g.LastDeliveredID)
	}
}

func TestCLIStreamGroup_destroyWarnsInPlanAndApply(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "new"))
	r.apply().must(t, true)

	diagtest.ExpectWarning(t, r.plan(tfexec.Destroy(true)).must(t, true).diags, diagtest.WillStaySummary, 1,
		`group "billing" of stream`, "sends nothing to the server")
	diagtest.ExpectWarning(t, r.destroy().must(t, true).diags, diagtest.LeftSummary, 1,
		`group "billing" of stream`, "sends nothing to the server")
	if err := valkeytest.CheckGroup(rdb, stream, "billing"); err != nil {
		t.Errorf("after destroy: %v", err)
	}
}

func TestCLIStreamGroup_groupStartChangeWarnsPositionStays(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "new"))
	r.apply().must(t, true)

	r.write(acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "head"))
	diags := r.plan().must(t, true).diags
	diagtest.ExpectWarning(t, diags, diagtest.StartChangeSummary, 1,
		`from "new" to "head"`, "will adopt it and its read position will not move")
	diagtest.ExpectWarning(t, diags, diagtest.ReplacedSummary, 0)
}

// TestCLIStreamGroup_replacementKeepsTheStreamNotesOfOtherGroups: Terraform plans a replacement
// twice and shows only the first call's warnings. A note given once per stream or per plan must
// not be spent in the second call, or the other groups' plan loses it. Here a pipeline plans
// with -refresh=false after the stream was deleted: the group whose group_start changes is
// replaced first (depends_on fixes the order), then a new group on the same stream is planned,
// and the plan must still say that the stream will be created; with the server down, that the
// check was skipped.
func TestCLIStreamGroup_replacementKeepsTheStreamNotesOfOtherGroups(t *testing.T) {
	t.Parallel()
	ctx, srv := context.Background(), valkeytest.StartT(t)
	rdb, stream := acctest.Admin(t, srv), acctest.StreamKey(t)
	provider := acctest.ProviderConfig(srv)
	r := newCLIRun(t, provider+acctest.NamedGroupConfig("billing", stream, "billing", "head"))
	r.apply().must(t, true)
	acctest.MustDo(t, rdb.Del(ctx, stream).Err())

	r.write(provider + acctest.NamedGroupConfig("billing", stream, "billing", "new") + fmt.Sprintf(`
resource "valkey_stream_group" "audit" {
  stream      = %q
  name        = "audit"
  group_start = "new"
  depends_on  = [valkey_stream_group.billing]
}
`, stream))
	diags := r.plan(tfexec.Refresh(false), tfexec.Parallelism(1)).must(t, true).diags
	diagtest.ExpectWarning(t, diags, diagtest.StartChangeSummary, 1, `from "head" to "new"`)
	diagtest.ExpectWarning(t, diags, planwords.StreamWillBeCreated(stream), 1, `together with group "audit"`)

	srv.Stop()
	diags = r.plan(tfexec.Refresh(false), tfexec.Parallelism(1)).must(t, true).diags
	diagtest.ExpectWarning(t, diags, diagtest.StartChangeSummary, 1)
	diagtest.ExpectWarning(t, diags, diagtest.CheckSkippedSummary, 1, `group "audit" of stream`)
}

func TestCLIStreamGroup_renameWarnsOldGroupStays(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "new"))
	r.apply().must(t, true)

	r.write(acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "invoicing", "new"))
	diagtest.ExpectWarning(t, r.apply().must(t, true).diags, diagtest.ReplacedSummary, 1,
		`group "billing" of stream`)
	for _, g := range []string{"billing", "invoicing"} {
		if err := valkeytest.CheckGroup(rdb, stream, g); err != nil {
			t.Errorf("after the rename: %v", err)
		}
	}
}

// TestCLIStreamGroup_lostReplyFailsLoudlyThenAdopts: the server runs XGROUP CREATE and its reply
// is lost. The apply fails loudly, never reports an adoption, records nothing, and says what the
// server shows; the command is not sent again. The next apply adopts the group, and its warning
// allows that the group may be the first apply's own.
func TestCLIStreamGroup_lostReplyFailsLoudlyThenAdopts(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	rdb, stream := acctest.Admin(t, srv), acctest.StreamKey(t)
	valkeytest.XAdd(t, rdb, stream, "1-1", "1-2")
	proxy := faultproxy.StartProxyT(t, srv.Addr(), faultproxy.Fault{Command: "XGROUP CREATE", Action: faultproxy.DropReply, Times: 1})
	r := newCLIRun(t, fmt.Sprintf("provider \"valkey\" {\n  url = %q\n}\n", proxy.URL())+acctest.StreamGroupConfig(stream, "lost", "head"))

	expectOutcomeUnknownThenAdopted(t, r, stream, "lost", proxy.Addr(), []*redis.Client{rdb},
		"its reply was lost: the connection closed before the reply came (")
	if g, _, _ := valkeytest.Group(rdb, stream, "lost"); g.LastDeliveredID != "0-0" {
		t.Errorf("the group is at %s; the lost create started it at the head", g.LastDeliveredID)
	}
}

// TestCLIStreamGroup_terminalNamesEveryGroupWithItsFigures: in the terminal, where reviewers read
// a plan, every group that will replay, skip or be adopted has a warning of its own that names
// it with its figures, for a module of 50 groups: Terraform folds warnings that share a summary
// into "(and N more similar warnings elsewhere)", and the -json output (never folded) hides that.
func TestCLIStreamGroup_terminalNamesEveryGroupWithItsFigures(t *testing.T) {
	t.Parallel()
	ctx, rdb := context.Background(), acctest.Admin(t, acctest.Server(t))
	prefix := acctest.StreamKey(t)
	small, big, fresh := prefix+":small", prefix+":big", prefix+":fresh"
	valkeytest.XAdd(t, rdb, small, "1-1", "1-2", "1-3")
	for i := range 1200 {
		acctest.MustDo(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: big, ID: fmt.Sprintf("2-%d", i+1), Values: []string{"f", "v"}}).Err())
	}
	// plan and apply are the summaries of the group's warning in each ("" for none): apply
	// shows the plan's again, but an adoption's own.
	type group struct{ stream, start, plan, apply string }
	groups := map[string]group{}
	for i := range 50 {
		name := fmt.Sprintf("g%02d", i)
		preview := func(stream string, d planwords.Decision, figure string) string {
			return planwords.GroupSummary(stream, name, d, figure)
		}
		switch {
		case i < 10:
			s := preview(small, planwords.WillReplay, planwords.EntriesFigure(3))
			groups[name] = group{small, "head", s, s}
		case i < 20:
			s := preview(big, planwords.WillReplay, planwords.EntriesFigure(1200))
			groups[name] = group{big, "head", s, s}
		case i < 35:
			s := preview(big, planwords.WillSkip, planwords.EntriesFigure(1200))
			groups[name] = group{big, "new", s, s}
		case i < 45:
			if err := rdb.Do(ctx, "XGROUP", "CREATE", small, name, "1-2", "ENTRIESREAD", 2).Err(); err != nil {
				t.Fatal(err)
			}
			groups[name] = group{small, "new", preview(small, planwords.WillBeAdopted, planwords.LagFigure("1")), preview(small, planwords.AdoptedNotCreated, "")}
		default:
			groups[name] = group{fresh, "new", "", ""}
		}
	}
	var config strings.Builder
	config.WriteString(acctest.ProviderConfig(acctest.Server(t)) + "locals {\n  groups = {\n")
	for name, g := range groups {
		fmt.Fprintf(&config, "    %s = { stream = %q, start = %q }\n", name, g.stream, g.start)
	}
	config.WriteString(`  }
}

resource "valkey_stream_group" "each" {
  for_each    = local.groups
  stream      = each.value.stream
  name        = each.key
  group_start = each.value.start
}
`)
	r := newCLIRun(t, config.String())
	r.human = true
	plan := string(r.plan().must(t, true).stdout)
	if strings.Contains(plan, "more similar warning") {
		t.Errorf("the plan folded warnings:\n%s", plan)
	}
	for _, g := range groups {
		if g.plan == "" {
			continue
		}
		if line := "Warning: " + g.plan + "\n"; strings.Count(plan, line) != 1 {
			t.Errorf("the plan does not show %q once", strings.TrimSpace(line))
		}
	}
	if n := strings.Count(plan, "Warning: "+planwords.StreamWillBeCreated(fresh)+"\n"); n != 1 {
		t.Errorf("the plan says %d times that %s will be created, want once", n, fresh)
	}

	// apply prints the plan's previews, then those of the plan Terraform makes again as it
	// applies: each group's two identical copies may fold into one, never another group's.
	apply := string(r.apply().must(t, true).stdout)
	for _, g := range groups {
		line := "Warning: " + g.apply + "\n"
		if g.apply != "" && !strings.Contains(apply, line) {
			t.Errorf("the apply does not show %q", strings.TrimSpace(line))
		}
	}
	if folded := strings.Count(apply, "more similar warning"); folded > len(groups) {
		t.Errorf("the apply folded %d warnings; only each group's repeated preview may fold", folded)
	}
}
