package provider

import (
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// TestUnreachableHint_EveryCauseSaysWhatToCheck: each cause the client can tell gets its own
// advice, in the provider's words; only CauseOther gets the generic one.
func TestUnreachableHint_EveryCauseSaysWhatToCheck(t *testing.T) {
	generic := unreachableHint(valkey.CauseOther)
	want := map[valkey.Cause]string{
		valkey.CauseConfigUnknown: "terraform apply -target",
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
	}
	for cause, fragment := range want {
		hint := unreachableHint(cause)
		if hint == generic || !strings.Contains(hint, fragment) {
			t.Errorf("cause %d: hint %q, want one mentioning %q", cause, hint, fragment)
		}
	}
}

func TestRefusedHint_NamesWhatToDo(t *testing.T) {
	for code, fragment := range map[string]string{
		"NOPERM": "minimal ACL", "READONLY": "primary", "LOADING": "loading", "CLUSTERDOWN": "CLUSTER INFO",
		"MOVED": "cluster attribute", "ASK": "cluster attribute", "CROSSSLOT": "cluster attribute", "ERR": "server's reply",
	} {
		if hint := refusedHint(code); !strings.Contains(hint, fragment) {
			t.Errorf("%s: hint %q, want one mentioning %q", code, hint, fragment)
		}
	}
}

func TestErrorDetail_RefusedWaitSaysWhatToGrant(t *testing.T) {
	detail := errorDetail(&valkey.RefusedError{Addr: "primary", Key: "s", Command: "WAIT",
		Reply: "NOPERM User terraform has no permissions to run the 'wait' command"}, groupSubject("s", "g"))
	for _, want := range []string{"refused WAIT", "NOPERM", "+wait", "min_replica_acks = 0", "adopts the group"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail %q does not mention %q", detail, want)
		}
	}
}
