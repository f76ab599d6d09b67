package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// Plan-time checks: a reviewer reading the plan learns what XGROUP CREATE will meet at apply
// (plan_preview_test.go says which are direct calls of ModifyPlan and which run on the CLI).

func TestStreamGroupModifyPlan_notesStreamWillBeCreated(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	diags := newPlanPreview(t, map[string]string{"url": testServer(t).URL()}).create(stream, "new")
	expectWarning(t, diags, streamCreatedSummary, 1, fmt.Sprintf("Stream %q does not exist yet", stream), "MKSTREAM")
	expectWarning(t, diags, willAdoptSummary, 0)
	if keyExists(t, rdb, stream) {
		t.Errorf("planning created the stream")
	}
}

func TestAccStreamGroup_planFailsWhenKeyHoldsAnotherType(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	mustDo(t, rdb.HSet(ctx, stream, "field", "value").Err())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      testAccProviderConfig(testServer(t)) + testAccStreamGroupConfig(stream, "billing", "new"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Consumer Group Cannot Be Created.*with valkey_stream_group.test.*holds a hash, not a\s+stream`),
		}},
	})
	if typ := rdb.Type(ctx, stream).Val(); typ != "hash" {
		t.Errorf("the key is now a %s; planning must not write", typ)
	}
}

func TestCLIStreamGroup_planWithServerDownWarnsOnceAndProceeds(t *testing.T) {
	t.Parallel()
	down := valkeytest.StartT(t)
	down.Close() // its port is now closed
	stream := testKey(t)
	config := testAccProviderConfig(down)
	for i := range 3 {
		config += testAccNamedGroupConfig(fmt.Sprintf("g%d", i), stream, fmt.Sprintf("g%d", i), "new")
	}
	diags := newCLIRun(t, config).plan().must(t, true).diags
	expectWarning(t, diags, checkSkippedSummary, 1, "Could not talk to Valkey at "+down.Addr(), "Apply still sends XGROUP CREATE")
}

func TestCLIStreamGroup_groupCreatedBetweenPlanAndApplyIsAdopted(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "billing", "new"))
	expectWarning(t, r.plan(tfexec.Out(planFile)).must(t, true).diags, streamCreatedSummary, 1)

	if err := rdb.XGroupCreateMkStream(ctx, stream, "billing", "0").Err(); err != nil {
		t.Fatal(err)
	}
	expectWarning(t, r.apply(tfexec.DirOrPlan(planFile)).must(t, true).diags, adoptedSummary, 1)
	if groups := r.stateGroups(); len(groups) != 1 || !groups[0].Adopted {
		t.Errorf("state holds %+v; the group made between plan and apply was adopted", groups)
	}
}

func TestCLIStreamGroup_groupRemovedBetweenPlanAndApplyIsCreated(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	if err := rdb.XGroupCreateMkStream(ctx, stream, "billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "billing", "new"))
	expectWarning(t, r.plan(tfexec.Out(planFile)).must(t, true).diags, willAdoptSummary, 1)

	if err := rdb.XGroupDestroy(ctx, stream, "billing").Err(); err != nil {
		t.Fatal(err)
	}
	expectWarning(t, r.apply(tfexec.DirOrPlan(planFile)).must(t, true).diags, adoptedSummary, 0)
	if groups := r.stateGroups(); len(groups) != 1 || groups[0].Adopted {
		t.Errorf("state holds %+v; the group removed between plan and apply was created anew", groups)
	}
	if err := checkGroupOnServer(rdb, stream, "billing"); err != nil {
		t.Error(err)
	}
}

func TestStreamGroupModifyPlan_checksNeedNoWritePermission(t *testing.T) {
	t.Parallel()
	ctx, rdb := context.Background(), testAdmin(t, testServer(t))
	existing, fresh := testKey(t), testKey(t)
	if err := rdb.XGroupCreateMkStream(ctx, existing, "billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	// A user that can run the plan-time reads and nothing else: no write command at all.
	user, pw := testServer(t).ACLUser(t, "*", "+xinfo|groups +type")

	p := newPlanPreview(t, map[string]string{"url": testServer(t).URL(), "username": user, "password": pw})
	diags := append(p.create(existing, "new"), p.create(fresh, "new")...)
	expectWarning(t, diags, willAdoptSummary, 1, existing)
	expectWarning(t, diags, streamCreatedSummary, 1, fresh)
	expectWarning(t, diags, checkSkippedSummary, 0)
	if keyExists(t, rdb, fresh) {
		t.Errorf("planning created %s", fresh)
	}
}

func TestCLIStreamGroup_wrongTypeAfterPlanFailsApplyWritesNoState(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), testAdmin(t, testServer(t)), testKey(t)
	r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "billing", "new"))
	r.plan(tfexec.Out(planFile)).must(t, true)

	// The key becomes a string after the plan was approved. Terraform re-plans each resource
	// during apply, so the plan-time check meets it first; XGROUP CREATE's own refusal is guarded
	// in internal/valkey (TestEnsureGroup_WrongTypeNamesTheType). Either way: loud, no state.
	mustDo(t, rdb.Set(ctx, stream, "not a stream", 0).Err())
	diags := r.apply(tfexec.DirOrPlan(planFile)).must(t, false).diags
	errs := append(findDiagnostic(diags, tfjson.DiagnosticSeverityError, "Consumer Group Not Created"),
		findDiagnostic(diags, tfjson.DiagnosticSeverityError, "Consumer Group Cannot Be Created")...)
	if len(errs) != 1 || !strings.Contains(unwrap(errs[0].Detail), fmt.Sprintf("Key %q on the server at %s holds a string, not a stream", stream, testServer(t).Addr())) {
		t.Fatalf("want one error naming the key, the address and 'string'; diagnostics: %+v", diags)
	}
	if groups := r.stateGroups(); len(groups) != 0 {
		t.Errorf("state holds %+v after a failed XGROUP CREATE", groups)
	}
	if v := rdb.Get(ctx, stream).Val(); v != "not a stream" {
		t.Errorf("the string changed to %q", v)
	}
}
