package provider

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestCLIStreamGroup_lateReplyIsOutcomeUnknown: the server runs XGROUP CREATE, and its reply
// comes back only long after command_timeout (the proxy holds it back for ten times as long).
// The provider wrote the create and gave up waiting for its answer, so it cannot know what the
// server did: the apply fails with "Consumer Group Outcome Unknown", never "Consumer Group Not
// Created" (a known failure) and never an adoption, records nothing, does not send the create
// again, and says what the server shows. The next apply adopts the group. Standalone, and in
// Cluster mode, where the create goes through the proxy of the node that owns the stream.
func TestCLIStreamGroup_lateReplyIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	late := faultproxy.Fault{Command: "XGROUP CREATE", Action: faultproxy.DelayReply, Delay: 10 * timeout, Times: 1}
	settings := fmt.Sprintf("  command_timeout  = %q\n  min_replica_acks = 0\n", timeout)
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		srv := valkeytest.StartT(t)
		admin := testAdmin(t, srv)
		proxy := faultproxy.StartProxyT(t, srv.Addr(), late)
		provider := fmt.Sprintf("provider \"valkey\" {\n  url = %q\n%s}\n", proxy.URL(), settings)
		expectLateReplyOutcomeUnknown(t, provider, proxy.Addr(), []*redis.Client{admin})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		pc := faultproxy.StartProxiedClusterT(t, 3)
		for _, p := range pc.Proxies {
			p.Inject(late) // each proxy counts its own matches: only the stream's owner sees the create
		}
		var admins []*redis.Client
		quoted := make([]string, len(pc.Proxies))
		for i, n := range pc.Nodes {
			admins = append(admins, testAdmin(t, n))
			quoted[i] = strconv.Quote(pc.ProxyAddrs()[i])
		}
		provider := fmt.Sprintf("provider \"valkey\" {\n  cluster = {\n    addresses = [%s]\n  }\n%s}\n", strings.Join(quoted, ", "), settings)
		expectLateReplyOutcomeUnknown(t, provider, "cluster "+strings.Join(pc.ProxyAddrs(), ","), admins)
	})
}

// expectLateReplyOutcomeUnknown applies one group whose create's reply comes late, then again.
// addr is how the error names the server; admins reach every node directly.
func expectLateReplyOutcomeUnknown(t *testing.T, provider, addr string, admins []*redis.Client) {
	t.Helper()
	stream := testKey(t)
	r := newCLIRun(t, provider+testAccStreamGroupConfig(stream, "late", "head"))

	failed := r.apply().must(t, false).diags
	if notCreated := findDiagnostic(failed, tfjson.DiagnosticSeverityError, "Consumer Group Not Created"); len(notCreated) > 0 {
		t.Fatalf("the late reply was reported as a known failure: %s", notCreated[0].Detail)
	}
	errs := findDiagnostic(failed, tfjson.DiagnosticSeverityError, "Consumer Group Outcome Unknown")
	if len(errs) != 1 {
		t.Fatalf("want one Consumer Group Outcome Unknown error; diagnostics: %+v", failed)
	}
	for _, want := range []string{
		fmt.Sprintf("XGROUP CREATE for group %q of stream %q was sent to %s, but its reply was lost", "late", stream, addr),
		"i/o timeout", "cannot tell whether this apply created the group", "was not sent again",
		fmt.Sprintf("shows group %q on stream %q, at last-delivered-id 0-0", "late", stream), "Nothing was written to state",
	} {
		if !strings.Contains(unwrap(errs[0].Detail), want) {
			t.Errorf("the error does not say %q: %s", want, errs[0].Detail)
		}
	}
	expectWarning(t, failed, adoptedSummary, 0)
	if groups := r.stateGroups(); len(groups) != 0 {
		t.Errorf("state after the late reply: %+v, want nothing", groups)
	}
	calls := 0
	for _, rdb := range admins {
		calls += valkeytest.CommandCalls(t, rdb, "xgroup|create")
	}
	if calls != 1 {
		t.Errorf("XGROUP CREATE ran %d times in the first apply, want once", calls)
	}

	adopted := r.apply().must(t, true).diags
	expectWarning(t, adopted, adoptedSummary, 1, "at last-delivered-id 0-0", "an earlier apply whose reply was lost")
	if g := r.stateGroup("test"); !g.Adopted {
		t.Errorf("state after the second apply: %+v, want the group adopted", g)
	}
}
