package systemtest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
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
		admin := acctest.Admin(t, srv)
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
			admins = append(admins, acctest.Admin(t, n))
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
	stream := acctest.StreamKey(t)
	r := newCLIRun(t, provider+acctest.StreamGroupConfig(stream, "late", "head"))
	expectOutcomeUnknownThenAdopted(t, r, stream, "late", addr, admins,
		"its reply was lost: the server did not answer within command_timeout (", "i/o timeout", "raise command_timeout")
}

// expectOutcomeUnknownThenAdopted applies r, whose one resource (valkey_stream_group.test)
// declares group name of stream, a new group whose create's reply a fault keeps from the
// provider (lost, or late), and applies it again. The first apply fails with Outcome Unknown
// alone (never "Consumer Group Not Created", a known failure, and never an adoption), whose
// detail says where the create went, that it was not sent again, what the server shows and
// each of causes; it records nothing, and the server ran the create once. The second apply
// adopts the group, with the warning that allows it may be the first apply's own. addr is how
// the error names the server; admins reach every node directly.
func expectOutcomeUnknownThenAdopted(t *testing.T, r *cliRun, stream, name, addr string, admins []*redis.Client, causes ...string) {
	t.Helper()
	failed := r.apply().must(t, false)
	sent := fmt.Sprintf("XGROUP CREATE for group %q of stream %q was sent to %s, but its reply was lost", name, stream, addr)
	expectErrorsOnly(t, failed, sent, "Consumer Group Outcome Unknown")
	errs := diagtest.Find(failed.diags, tfjson.DiagnosticSeverityError, "Consumer Group Outcome Unknown")
	if len(errs) != 1 {
		t.Fatalf("want one Consumer Group Outcome Unknown error; diagnostics: %+v", failed.diags)
	}
	for _, want := range append([]string{
		"cannot tell whether this apply created the group", "was not sent again",
		fmt.Sprintf("shows group %q on stream %q, at last-delivered-id 0-0", name, stream), "Nothing was written to state",
	}, causes...) {
		if !strings.Contains(diagtest.Unwrap(errs[0].Detail), want) {
			t.Errorf("the error does not say %q: %s", want, errs[0].Detail)
		}
	}
	diagtest.ExpectWarning(t, failed.diags, diagtest.AdoptedSummary, 0)
	if groups := r.stateGroups(); len(groups) != 0 {
		t.Errorf("state after the create whose reply did not come: %+v, want nothing", groups)
	}
	calls := 0
	for _, rdb := range admins {
		calls += valkeytest.CommandCalls(t, rdb, "xgroup|create")
	}
	if calls != 1 {
		t.Errorf("XGROUP CREATE ran %d times in the first apply, want once", calls)
	}

	adopted := r.apply().must(t, true).diags
	diagtest.ExpectWarning(t, adopted, diagtest.AdoptedSummary, 1, "at last-delivered-id 0-0", "an earlier apply whose reply was lost")
	if g := r.stateGroup("test"); !g.Adopted {
		t.Errorf("state after the second apply: %+v, want the group adopted", g)
	}
}
