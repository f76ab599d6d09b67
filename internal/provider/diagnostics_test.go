package provider

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// TestUnreachableHint_EveryCauseSaysWhatToCheck: each cause the client can tell gets its own
// advice, in the provider's words; only CauseOther gets the generic one.
func TestUnreachableHint_EveryCauseSaysWhatToCheck(t *testing.T) {
	generic := unreachableHint(valkey.CauseOther, 0)
	want := map[valkey.Cause]string{
		valkey.CauseAuth:          "Authentication failed",
		valkey.CauseNoPerm:        "minimal ACL",
		valkey.CauseClusterDown:   "CLUSTER INFO",
		valkey.CauseDNS:           "does not resolve",
		valkey.CauseRefused:       "Nothing is listening",
		valkey.CauseTLSVerify:     "tls.ca_cert",
		valkey.CauseTLSRejected:   "tls.cert and tls.key",
		valkey.CauseNotTLS:        "did not speak TLS",
		valkey.CauseClosed:        "valkeys://",
		valkey.CauseClosedTLS:     "tls.cert and tls.key",
		valkey.CauseClosedTLSCert: "tls-ca-cert-file",
		valkey.CauseTimeout:       "dial_timeout",
		valkey.CauseNoDatabase:    "`databases` setting",
		// The database asked for, the setting to change and how (at start), and the other way out.
		valkey.CauseNoClusterDatabase: "no database 3: in Cluster mode, Valkey 9.0 and later serve the databases below " +
			"`cluster-databases` (1 by default, so only database 0), and earlier versions only database 0. Start every node with " +
			"`cluster-databases` above 3",
	}
	for cause, fragment := range want {
		hint := unreachableHint(cause, 3)
		if hint == generic || !strings.Contains(hint, fragment) {
			t.Errorf("cause %d: hint %q, want one mentioning %q", cause, hint, fragment)
		}
	}
}

func TestRefusedHint_NamesWhatToDo(t *testing.T) {
	for code, fragment := range map[string]string{
		"NOPERM": "minimal ACL", "READONLY": "primary", "LOADING": "loading", "CLUSTERDOWN": "CLUSTER INFO", "OOM": "maxmemory",
		"MOVED": "cluster attribute", "ASK": "cluster attribute", "CROSSSLOT": "cluster attribute", "ERR": "server's reply",
	} {
		if hint := refusedHint(code); !strings.Contains(hint, fragment) {
			t.Errorf("%s: hint %q, want one mentioning %q", code, hint, fragment)
		}
	}
}

// TestErrorDetail_UnconfirmedSaysWhatHappened: a group the replicas did not confirm is worded as
// XGROUP CREATE met it, created or adopted, and says what to do for each way WAIT fell short.
func TestErrorDetail_UnconfirmedSaysWhatHappened(t *testing.T) {
	for name, tc := range map[string]struct {
		err       valkey.UnconfirmedError
		want, not []string
	}{
		"created, short": {valkey.UnconfirmedError{Outcome: valkey.Created, Acked: 0, Wanted: 1, Timeout: time.Second},
			[]string{"XGROUP CREATE created group", "only 0 of the 1 replicas", "within 1s", "the group is adopted if it survived"}, []string{"already existed"}},
		"adopted, short": {valkey.UnconfirmedError{Outcome: valkey.Adopted, Acked: 1, Wanted: 2, Timeout: time.Second},
			[]string{`Group "g" of stream "s" already existed at primary (XGROUP CREATE answered BUSYGROUP), so it was adopted`, "only 1 of the 2 replicas"},
			[]string{"created", "wrote"}},
		"adopted, refused": {valkey.UnconfirmedError{Outcome: valkey.Adopted, Reply: "NOPERM User terraform has no permissions to run the 'wait' command"},
			[]string{"already existed", "refused WAIT", "NOPERM", "+wait", "min_replica_acks = 0", "the group is then adopted"}, []string{"created"}},
		"created, lost": {valkey.UnconfirmedError{Outcome: valkey.Created, Err: io.EOF},
			[]string{"XGROUP CREATE created group", "reply to WAIT", "was lost (EOF)"}, nil},
		"created on a cluster node, short": {valkey.UnconfirmedError{Outcome: valkey.Created, Node: "10.0.0.7:6379", Wanted: 1, Timeout: time.Second},
			[]string{`XGROUP CREATE created group "g" of stream "s" at node 10.0.0.7:6379 of primary`, "on by default with sentinel and cluster",
				"without replicas can never confirm", "min_replica_acks = 0"}, nil},
	} {
		tc.err.Addr, tc.err.Key, tc.err.Group = "primary", "s", "g"
		detail := errorDetail(&tc.err, groupSubject("s", "g"))
		for _, want := range tc.want {
			if !strings.Contains(detail, want) {
				t.Errorf("%s: detail %q does not mention %q", name, detail, want)
			}
		}
		for _, not := range tc.not {
			if strings.Contains(detail, not) {
				t.Errorf("%s: detail %q says %q, which did not happen", name, detail, not)
			}
		}
		if summary := ensureErrorSummary(&tc.err); summary != "Consumer Group Not Confirmed By Replicas" {
			t.Errorf("%s: summary %q", name, summary)
		}
	}
}

// TestErrorDetail_LostReplySaysWhatTheServerShows: a lost reply is never worded as a refusal or
// an adoption; it says the outcome is unknown, that nothing was resent, and what the server
// showed when asked again.
func TestErrorDetail_LostReplySaysWhatTheServerShows(t *testing.T) {
	lag := int64(0)
	for name, tc := range map[string]struct {
		now    valkey.GroupState
		nowErr error
		want   string
	}{
		"group there": {valkey.GroupState{StreamExists: true, GroupExists: true, Group: valkey.Group{Name: "g", LastDeliveredID: "0-0", Lag: &lag}},
			nil, `shows group "g" on stream "s", at last-delivered-id 0-0 with lag 0`},
		"stream without the group": {valkey.GroupState{StreamExists: true}, nil, `shows stream "s" without group "g"`},
		"no stream":                {valkey.GroupState{}, nil, `shows no stream "s"`},
		"unreadable":               {valkey.GroupState{}, errors.New("cannot reach valkey at primary: EOF"), "could not be read either (cannot reach valkey at primary: EOF)"},
	} {
		err := &valkey.UnknownOutcomeError{Addr: "primary", Stream: "s", Group: "g", Err: io.ErrUnexpectedEOF, Now: tc.now, NowErr: tc.nowErr}
		detail := errorDetail(err, groupSubject("s", "g"))
		for _, want := range []string{tc.want, "was sent to primary, but its reply was lost: the connection closed before the reply came (unexpected EOF)",
			"cannot tell whether this apply created the group", "not sent again", "Nothing was written to state", "terraform apply again"} {
			if !strings.Contains(detail, want) {
				t.Errorf("%s: detail %q does not mention %q", name, detail, want)
			}
		}
		if summary := ensureErrorSummary(err); summary != "Consumer Group Outcome Unknown" {
			t.Errorf("%s: summary %q", name, summary)
		}
	}
}

// TestErrorDetail_LostReplySaysWhyItWasLost: a reply that never came within command_timeout and
// a connection that closed before the reply are told apart in words, each with what to check;
// any other loss (a cancelled run) quotes the error as it is.
func TestErrorDetail_LostReplySaysWhyItWasLost(t *testing.T) {
	for name, tc := range map[string]struct {
		err        error
		want, hint string
	}{
		"late": {&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded},
			"its reply was lost: the server did not answer within command_timeout (read tcp: i/o timeout), so",
			"the server's load (raise command_timeout if it is only slow), then run terraform apply again"},
		"closed": {io.EOF, "its reply was lost: the connection closed before the reply came (EOF), so",
			"Check the network path to the server and the server's logs, then run terraform apply again"},
		"cancelled": {context.Canceled, "its reply was lost (context canceled), so",
			"Check the network path to the server, then run terraform apply again"},
	} {
		detail := errorDetail(&valkey.UnknownOutcomeError{Addr: "primary", Stream: "s", Group: "g", Err: tc.err}, groupSubject("s", "g"))
		for _, want := range []string{tc.want, tc.hint} {
			if !strings.Contains(detail, want) {
				t.Errorf("%s: detail %q does not say %q", name, detail, want)
			}
		}
	}
}

// TestErrorDetail_OnePeriod: the server's words often end with a period; the detail ends its
// sentence once ("disabled." not "disabled..").
func TestErrorDetail_OnePeriod(t *testing.T) {
	detail := errorDetail(&valkey.UnreachableError{Addr: "a:1", Step: "HELLO",
		Err: errors.New("WRONGPASS invalid username-password pair or user is disabled.")}, groupSubject("s", "g"))
	if strings.Contains(detail, "..") || !strings.Contains(detail, "user is disabled.\n") {
		t.Errorf("detail %q", detail)
	}
}

// TestErrorDetail_ClusterSlotMapFailureSaysNothingWasSent: a cluster whose slot map could not be
// read is worded as what it is, no connection that failed to open and no lost reply.
func TestErrorDetail_ClusterSlotMapFailureSaysNothingWasSent(t *testing.T) {
	err := &valkey.UnreachableError{Addr: "cluster 127.0.0.1:7000", Step: "CLUSTER SLOTS", Err: errors.New("i/o timeout")}
	detail := errorDetail(err, groupSubject("s", "g"))
	for _, want := range []string{"Could not learn which Valkey cluster node serves the key (CLUSTER SLOTS failed) at cluster 127.0.0.1:7000", ": i/o timeout."} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail %q does not say %q", detail, want)
		}
	}
	if summary := ensureErrorSummary(err); summary != "Consumer Group Not Created" {
		t.Errorf("summary %q, want Consumer Group Not Created", summary)
	}
}
