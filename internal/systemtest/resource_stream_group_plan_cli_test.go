package systemtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The plan on the real CLI when the server is down at plan time, and when the key or the group
// changes between plan and apply. The direct-call tests of the plan are in internal/provider.

func TestCLIStreamGroup_planWithServerDownWarnsOnceAndProceeds(t *testing.T) {
	t.Parallel()
	down := valkeytest.StartT(t)
	down.Close() // its port is now closed
	stream := acctest.StreamKey(t)
	config := acctest.ProviderConfig(down)
	for i := range 3 {
		config += acctest.NamedGroupConfig(fmt.Sprintf("g%d", i), stream, fmt.Sprintf("g%d", i), "new")
	}
	diags := newCLIRun(t, config).plan().must(t, true).diags
	diagtest.ExpectWarning(t, diags, diagtest.CheckSkippedSummary, 1, "Could not talk to Valkey at "+down.Addr(), "Apply still sends XGROUP CREATE")
}

func TestCLIStreamGroup_groupCreatedBetweenPlanAndApplyIsAdopted(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "new"))
	diagtest.ExpectWarning(t, r.plan(tfexec.Out(planFile)).must(t, true).diags, diagtest.StreamCreatedSummary, 1)

	if err := rdb.XGroupCreateMkStream(ctx, stream, "billing", "0").Err(); err != nil {
		t.Fatal(err)
	}
	diagtest.ExpectWarning(t, r.apply(tfexec.DirOrPlan(planFile)).must(t, true).diags, diagtest.AdoptedSummary, 1)
	if groups := r.stateGroups(); len(groups) != 1 || !groups[0].Adopted {
		t.Errorf("state holds %+v; the group made between plan and apply was adopted", groups)
	}
}

func TestCLIStreamGroup_groupRemovedBetweenPlanAndApplyIsCreated(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	if err := rdb.XGroupCreateMkStream(ctx, stream, "billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "new"))
	diagtest.ExpectWarning(t, r.plan(tfexec.Out(planFile)).must(t, true).diags, diagtest.WillAdoptSummary, 1)

	if err := rdb.XGroupDestroy(ctx, stream, "billing").Err(); err != nil {
		t.Fatal(err)
	}
	diagtest.ExpectWarning(t, r.apply(tfexec.DirOrPlan(planFile)).must(t, true).diags, diagtest.AdoptedSummary, 0)
	if groups := r.stateGroups(); len(groups) != 1 || groups[0].Adopted {
		t.Errorf("state holds %+v; the group removed between plan and apply was created anew", groups)
	}
	if err := valkeytest.CheckGroup(rdb, stream, "billing"); err != nil {
		t.Error(err)
	}
}

func TestCLIStreamGroup_wrongTypeAfterPlanFailsApplyWritesNoState(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "new"))
	r.plan(tfexec.Out(planFile)).must(t, true)

	// The key becomes a string after the plan was approved. Terraform re-plans each resource
	// during apply, so the plan-time check meets it first; XGROUP CREATE's own refusal is guarded
	// in internal/valkey (TestEnsureGroup_WrongTypeNamesTheType). Either way: loud, no state.
	acctest.MustDo(t, rdb.Set(ctx, stream, "not a stream", 0).Err())
	diags := r.apply(tfexec.DirOrPlan(planFile)).must(t, false).diags
	errs := append(diagtest.Find(diags, tfjson.DiagnosticSeverityError, "Consumer Group Not Created"),
		diagtest.Find(diags, tfjson.DiagnosticSeverityError, "Consumer Group Cannot Be Created")...)
	if len(errs) != 1 || !strings.Contains(diagtest.Unwrap(errs[0].Detail), fmt.Sprintf("Key %q on the server at %s holds a string, not a stream", stream, acctest.Server(t).Addr())) {
		t.Fatalf("want one error naming the key, the address and 'string'; diagnostics: %+v", diags)
	}
	if groups := r.stateGroups(); len(groups) != 0 {
		t.Errorf("state holds %+v after a failed XGROUP CREATE", groups)
	}
	if v := rdb.Get(ctx, stream).Val(); v != "not a stream" {
		t.Errorf("the string changed to %q", v)
	}
}
