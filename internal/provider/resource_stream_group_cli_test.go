package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

func TestCLIStreamGroup_adoptionWarnsInPlanAndApplyWithPosition(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	valkeytest.XAdd(t, rdb, stream, "42-7", "43-0")
	if err := rdb.XGroupCreate(ctx, stream, "billing", "42-7").Err(); err != nil {
		t.Fatal(err)
	}
	r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "billing", "head"))

	diags := r.run(true, "plan")
	expectWarning(t, diags, willAdoptSummary, 1,
		fmt.Sprintf("Group %q already exists on stream %q", "billing", stream),
		`group_start "head" will not move its read position`, "last-delivered-id 42-7 with lag 1")
	expectWarning(t, diags, streamCreatedSummary, 0)
	applied := r.run(true, "apply", "-auto-approve")
	expectWarning(t, applied, adoptedSummary, 1,
		fmt.Sprintf("%q already existed on stream %q", "billing", stream), "adopted as it is, at last-delivered-id 42-7 with lag 1",
		"cannot tell who created it", "an earlier apply whose reply was lost")
	// The door saw BUSYGROUP and nothing more: it does not claim the start was not applied.
	for _, d := range findDiagnostic(applied, "warning", adoptedSummary) {
		if strings.Contains(d.Detail, "was not applied") {
			t.Errorf("the adoption warning claims what the door cannot know: %s", d.Detail)
		}
	}
	if g, _, _ := serverGroup(rdb, stream, "billing"); g.LastDeliveredID != "42-7" {
		t.Errorf("planning and adopting moved the group to %s", g.LastDeliveredID)
	}
}

func TestCLIStreamGroup_destroyWarnsInPlanAndApply(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "billing", "new"))
	r.run(true, "apply", "-auto-approve")

	expectWarning(t, r.run(true, "plan", "-destroy"), willStaySummary, 1,
		`group "billing" of stream`, "sends nothing to the server")
	expectWarning(t, r.run(true, "destroy", "-auto-approve"), leftSummary, 1,
		`group "billing" of stream`, "sends nothing to the server")
	if err := checkGroupOnServer(rdb, stream, "billing"); err != nil {
		t.Errorf("after destroy: %v", err)
	}
}

func TestCLIStreamGroup_groupStartChangeWarnsPositionStays(t *testing.T) {
	t.Parallel()
	stream := testKey(t)
	r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "billing", "new"))
	r.run(true, "apply", "-auto-approve")

	r.write(testAccProviderConfig(testServer(t)) + testAccStreamGroupConfig(stream, "billing", "head"))
	diags := r.run(true, "plan")
	expectWarning(t, diags, startChangeSummary, 1,
		`from "new" to "head"`, "will adopt it and its read position will not move")
	expectWarning(t, diags, replacedSummary, 0)
}

func TestCLIStreamGroup_renameWarnsOldGroupStays(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "billing", "new"))
	r.run(true, "apply", "-auto-approve")

	r.write(testAccProviderConfig(testServer(t)) + testAccStreamGroupConfig(stream, "invoicing", "new"))
	expectWarning(t, r.run(true, "apply", "-auto-approve"), replacedSummary, 1,
		`group "billing" of stream`)
	for _, g := range []string{"billing", "invoicing"} {
		if err := checkGroupOnServer(rdb, stream, g); err != nil {
			t.Errorf("after the rename: %v", err)
		}
	}
}
