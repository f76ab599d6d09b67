package systemtest

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestAccProvider_PasswordNeverLeaks runs Terraform against the built provider with
// TF_LOG=TRACE and human-readable output, and greps the log, the state, the plan JSON and the
// CLI's output for the password, given through VALKEY_PASSWORD and written in the provider
// block, and for a wrong one.
func TestAccProvider_PasswordNeverLeaks(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	user, password := acctest.Server(t).ACLUser(t, valkeytest.TagPattern(stream), valkeytest.MinimalACL)
	wrong := password + "-but-wrong"
	// config takes the password from VALKEY_PASSWORD (literal "") or has it written literally,
	// both as the attribute and inside the url.
	config := func(literal, secondStart string) string {
		url, attr := "valkey://"+user+"@"+acctest.Server(t).Addr()+"/0", ""
		if literal != "" {
			url = "valkey://" + user + ":" + literal + "@" + acctest.Server(t).Addr() + "/0"
			attr = fmt.Sprintf("  password = %q\n", literal)
		}
		return fmt.Sprintf("provider \"valkey\" {\n  url      = %q\n  username = %q\n%s}\n", url, user, attr) +
			acctest.StreamGroupConfig(stream, "billing", "new") +
			acctest.NamedGroupConfig("second", stream, "shipping", secondStart)
	}
	r := newCLIRun(t, config("", "head"))
	r.human = true

	start := time.Now()
	// 1. The recommended way: the password in VALKEY_PASSWORD. Nothing may carry it.
	runs := []cliResult{r.withPassword(password).apply().must(t, true)}
	if err := valkeytest.CheckGroup(acctest.Admin(t, acctest.Server(t)), stream, "billing"); err != nil {
		t.Fatalf("apply did not reach the server: %v", err)
	}
	// A pending change (the second group's replacement), so that the plan has content.
	r.write(config("", "new"))
	runs = append(runs, r.plan(tfexec.Out(planFile)).must(t, true))
	_, planJSON := r.showPlan()
	// A failure, whose messages must name the address but not the (wrong) password.
	failed := r.withPassword(wrong).plan().must(t, false)
	// 2. The password written in the provider block, in the url and as the attribute. The
	// provider must not log it or store it; Terraform itself copies provider-block literals
	// and variables into `terraform show -json`, so that output is not checked here.
	r.withPassword("").write(config(password, "head"))
	runs = append(runs, planJSON, failed, r.apply().must(t, true))
	r.write(config(wrong, "head"))
	runs = append(runs, r.plan().must(t, false))
	t.Logf("six terraform runs against the built provider took %v", time.Since(start))

	// The artefacts must be the real thing, or the greps prove nothing.
	trace, err := os.ReadFile(r.tracePath())
	acctest.MustDo(t, err)
	state := r.readState()
	for _, c := range []struct {
		what string
		data []byte
		want string
	}{
		{"TRACE log", trace, "tf_rpc=ConfigureProvider"},
		{"TRACE log", trace, "WRONGPASS"},
		{"state", state, `"valkey_stream_group"`},
		{"plan JSON", planJSON.stdout, `"resource_changes"`},
		{"CLI output", failed.output(), "Authentication failed"},
		{"CLI output", failed.output(), acctest.Server(t).Addr()},
	} {
		if !bytes.Contains(c.data, []byte(c.want)) {
			t.Errorf("%s does not contain %q; the test is not looking at what it should", c.what, c.want)
		}
	}
	r.expectNoSecret(password, runs...)
	r.expectNoSecret(wrong, runs...)
}
