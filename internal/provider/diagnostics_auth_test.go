package provider

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestTokenHint_NamedCredentialsFileMissing: with gcp_iam.credentials_file naming a file that is
// not there, the error names that file and says it is missing or unreadable; it never advises
// setting gcp_iam.credentials_file, which is set.
func TestTokenHint_NamedCredentialsFileMissing(t *testing.T) {
	t.Parallel()
	srv, pki := valkeytest.StartTLST(t, false)
	missing := filepath.Join(t.TempDir(), "no-such-credentials.json")
	client, err := valkey.NewClient(valkey.Options{URL: "valkey://" + srv.TLSAddr(), Username: "iam-user",
		TLS: &valkey.TLSOptions{CACert: string(pki.CACert)}, GCPIAM: &valkey.GCPIAMOptions{CredentialsFile: missing}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	_, _, err = client.EnsureGroup(context.Background(), "{tokenhint}:s", "g", valkey.StartNew)
	if err == nil {
		t.Fatal("EnsureGroup with a missing credentials file succeeded")
	}
	detail := errorDetail(err, groupSubject("{tokenhint}:s", "g"))
	for _, want := range []string{"(IAM token failed)", "The Google credentials file " + `"` + missing + `"`, "gcp_iam.credentials_file",
		"missing or unreadable", "unset it to use Application Default Credentials"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail does not say %q:\n%s", want, detail)
		}
	}
	if strings.Contains(detail, "set GOOGLE_APPLICATION_CREDENTIALS or gcp_iam.credentials_file") {
		t.Errorf("detail advises setting gcp_iam.credentials_file, which is set:\n%s", detail)
	}
}
