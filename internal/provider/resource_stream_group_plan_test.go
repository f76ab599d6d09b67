package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
)

// Plan-time checks: a reviewer reading the plan learns what XGROUP CREATE will meet at apply
// (plan_preview_test.go says which are direct calls of ModifyPlan and which run on the CLI).

func TestStreamGroupModifyPlan_notesStreamWillBeCreated(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	diags := newPlanPreview(t, map[string]string{"url": acctest.Server(t).URL()}).create(stream, "new")
	diagtest.ExpectWarning(t, diags, diagtest.StreamCreatedSummary, 1, fmt.Sprintf("Stream %q does not exist yet", stream), "MKSTREAM")
	diagtest.ExpectWarning(t, diags, diagtest.WillAdoptSummary, 0)
	if keyExists(t, rdb, stream) {
		t.Errorf("planning created the stream")
	}
}

func TestAccStreamGroup_planFailsWhenKeyHoldsAnotherType(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	acctest.MustDo(t, rdb.HSet(ctx, stream, "field", "value").Err())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "new"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Consumer Group Cannot Be Created.*with valkey_stream_group.test.*holds a hash, not a\s+stream`),
		}},
	})
	if typ := rdb.Type(ctx, stream).Val(); typ != "hash" {
		t.Errorf("the key is now a %s; planning must not write", typ)
	}
}

func TestStreamGroupModifyPlan_checksNeedNoWritePermission(t *testing.T) {
	t.Parallel()
	ctx, rdb := context.Background(), acctest.Admin(t, acctest.Server(t))
	existing, fresh := acctest.StreamKey(t), acctest.StreamKey(t)
	if err := rdb.XGroupCreateMkStream(ctx, existing, "billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	// A user that can run the plan-time reads and nothing else: no write command at all.
	user, pw := acctest.Server(t).ACLUser(t, "*", "+xinfo|groups +type")

	p := newPlanPreview(t, map[string]string{"url": acctest.Server(t).URL(), "username": user, "password": pw})
	diags := append(p.create(existing, "new"), p.create(fresh, "new")...)
	diagtest.ExpectWarning(t, diags, diagtest.WillAdoptSummary, 1, existing)
	diagtest.ExpectWarning(t, diags, diagtest.StreamCreatedSummary, 1, fresh)
	diagtest.ExpectWarning(t, diags, diagtest.CheckSkippedSummary, 0)
	if keyExists(t, rdb, fresh) {
		t.Errorf("planning created %s", fresh)
	}
}
