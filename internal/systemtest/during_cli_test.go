package systemtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// Events at an exact point of one apply (faultproxy.Fault.Before): after the plan read the
// server, right before its XGROUP CREATE reaches the server.

// TestCLIStreamGroup_groupCreatedRightBeforeTheCreateIsAdopted: the plan saw no group, and a
// consumer creates it right before the apply's XGROUP CREATE, which then meets BUSYGROUP: the
// group is adopted, with the adoption warning, and state says so.
func TestCLIStreamGroup_groupCreatedRightBeforeTheCreateIsAdopted(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := acctest.Admin(t, srv)
	stream := acctest.StreamKey(t)
	proxy := faultproxy.StartProxyT(t, srv.Addr(), faultproxy.Fault{Command: "XGROUP CREATE", Key: stream, Group: "billing", Times: 1,
		Before: func() {
			if err := admin.XGroupCreateMkStream(context.Background(), stream, "billing", "0").Err(); err != nil {
				t.Error(err)
			}
		}})
	provider := fmt.Sprintf("provider \"valkey\" {\n  url = %q\n  min_replica_acks = 0\n}\n", proxy.URL())
	r := newCLIRun(t, provider+acctest.StreamGroupConfig(stream, "billing", "new"))
	diags := r.apply().must(t, true).diags
	diagtest.ExpectWarning(t, diags, diagtest.AdoptedSummary, 1)
	if groups := r.stateGroups(); len(groups) != 1 || !groups[0].Adopted {
		t.Errorf("state holds %+v; the group the consumer made right before the create is adopted", groups)
	}
}

// TestCLIStreamGroup_restartRightBeforeTheCreateIsOutcomeUnknown: the server restarts (SIGKILL,
// then its AOF) right before the apply's XGROUP CREATE reaches it, so the create, written by
// the provider, never runs and its reply never comes: Outcome Unknown, nothing in state, no
// group on the server; the next apply creates it (not adopted).
func TestCLIStreamGroup_restartRightBeforeTheCreateIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t, chaosPersistence)
	admin := acctest.Admin(t, srv)
	stream := acctest.StreamKey(t)
	proxy := faultproxy.StartProxyT(t, srv.Addr(), faultproxy.Fault{Command: "XGROUP CREATE", Key: stream, Group: "billing", Times: 1,
		Before: func() {
			srv.Stop()
			if err := srv.Restart(); err != nil {
				t.Error(err)
			}
			if err := waitLoaded(admin); err != nil {
				t.Error(err)
			}
		}})
	provider := fmt.Sprintf("provider \"valkey\" {\n  url = %q\n  min_replica_acks = 0\n}\n", proxy.URL())
	r := newCLIRun(t, provider+acctest.StreamGroupConfig(stream, "billing", "new"))
	failed := r.apply().must(t, false)
	expectErrorsOnly(t, failed, "billing", "Consumer Group Outcome Unknown")
	if groups := r.stateGroups(); len(groups) != 0 {
		t.Errorf("state holds %+v after an unknown outcome; want nothing", groups)
	}
	if err := valkeytest.CheckGroup(admin, stream, "billing"); err == nil {
		t.Error("the group is on the server; the create struck by the restart never reached it")
	}
	again := r.apply().must(t, true)
	diagtest.ExpectWarning(t, again.diags, diagtest.AdoptedSummary, 0)
	if groups := r.stateGroups(); len(groups) != 1 || groups[0].Adopted {
		t.Errorf("state holds %+v; the next apply creates the group", groups)
	}
}
