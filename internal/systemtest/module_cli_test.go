package systemtest

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The module tests of examples/modules/stream-groups (tests/*.tftest.hcl), run with
// `terraform test` and `tofu test` as a module author runs them: with the provider under
// dev_overrides (the test command needs no init), VALKEY_URL naming the server, and the
// module's stream in a tfvars file. Each file runs on its own, through a proxy that counts the
// connections it is sent.

const moduleDir = "../../examples/modules/stream-groups"

// moduleTestRun copies the module and one of its test files into a fresh working directory.
func moduleTestRun(t *testing.T, testFile string) *cliRun {
	t.Helper()
	r := newCLIRun(t, "")
	need := "1.7.0" // mock_provider
	if os.Getenv("TF_ACC_PROVIDER_HOST") == "registry.opentofu.org" {
		need = "1.8.0"
	}
	if v := cliVersion(t); v.LessThan(version.Must(version.NewVersion(need))) {
		t.Skipf("the module tests need mock_provider (Terraform 1.7, OpenTofu 1.8); this CLI is %s", v)
	}
	files, err := filepath.Glob(filepath.Join(moduleDir, "*.tf"))
	acctest.MustDo(t, err)
	for _, f := range append(files, filepath.Join(moduleDir, "tests", testFile)) {
		b, err := os.ReadFile(f)
		acctest.MustDo(t, err)
		rel, err := filepath.Rel(moduleDir, f)
		acctest.MustDo(t, err)
		writeFile(t, filepath.Join(r.dir, rel), string(b))
	}
	return r
}

// moduleTestResult is what `terraform test -json` reported: each run's status by name, the
// warnings by run, and the summary.
type moduleTestResult struct {
	status   map[string]string
	warnings map[string][]string // run -> summaries
	summary  struct{ Status string }
	passed   int
}

// test runs `terraform test -json` and reads its messages (Terraform reports a run's status
// with progress "complete", OpenTofu without a progress).
func (r *cliRun) test() (moduleTestResult, cliResult) {
	res := r.run("test", func(ctx context.Context, w io.Writer) error { return r.tf.Test(ctx, w) })
	out := moduleTestResult{status: map[string]string{}, warnings: map[string][]string{}}
	for _, line := range strings.Split(string(res.stdout), "\n") {
		var msg struct {
			Type    string `json:"type"`
			Run     string `json:"@testrun"`
			TestRun struct {
				Run, Status string
			} `json:"test_run"`
			Diagnostic  diagtest.Diagnostic `json:"diagnostic"`
			TestSummary struct {
				Status string
				Passed int
			} `json:"test_summary"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil {
			continue
		}
		switch msg.Type {
		case "test_run":
			if msg.TestRun.Status != "" {
				out.status[msg.TestRun.Run] = msg.TestRun.Status
			}
		case "diagnostic":
			if msg.Diagnostic.Severity == "warning" {
				out.warnings[msg.Run] = append(out.warnings[msg.Run], msg.Diagnostic.Summary)
			}
		case "test_summary":
			out.summary.Status, out.passed = msg.TestSummary.Status, msg.TestSummary.Passed
		}
	}
	return out, res
}

// expectPassed fails unless the test command passed exactly the runs named.
func (m moduleTestResult) expectPassed(t *testing.T, res cliResult, runs ...string) {
	t.Helper()
	res.must(t, true)
	for _, run := range runs {
		if m.status[run] != "pass" {
			t.Errorf("run %q: %q, want pass", run, m.status[run])
		}
	}
	if m.summary.Status != "pass" || m.passed != len(runs) || len(m.status) != len(runs) {
		t.Errorf("test summary %q with %d passed of %v, want %d runs passed\n%s", m.summary.Status, m.passed, m.status, len(runs), res.output())
	}
}

// TestCLIModuleTests_streamGroups: the module's tests against a real server pass on a stream
// holding entries, the plan warns what each group will replay or skip, declaring a removed
// service again adopts its group (with the adoption warning), and the test's destroy leaves
// both groups on the server where their declared starts put them.
func TestCLIModuleTests_streamGroups(t *testing.T) {
	t.Parallel()
	r := moduleTestRun(t, "stream_groups.tftest.hcl")
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	acctest.SeedEntries(t, stream)
	proxy := faultproxy.StartProxyT(t, acctest.Server(t).Addr())
	r.env["VALKEY_URL"] = proxy.URL()
	r.put("terraform.tfvars", "stream = "+jsonString(stream)+"\n")

	m, res := r.test()
	m.expectPassed(t, res, "plan_names_each_group", "apply_creates_the_groups", "removed_service_leaves_its_group",
		"declared_again_it_is_adopted", "unknown_start_is_refused")
	plan := m.warnings["plan_names_each_group"]
	for _, want := range []string{planwords.GroupSummary(stream, "billing", planwords.WillReplay, planwords.EntriesFigure(3)),
		planwords.GroupSummary(stream, "shipping", planwords.WillSkip, planwords.EntriesFigure(3))} {
		if !slices.Contains(plan, want) {
			t.Errorf("the plan run did not warn %q; it warned %q", want, plan)
		}
	}
	if adopt := m.warnings["declared_again_it_is_adopted"]; !slices.Contains(adopt, planwords.GroupSummary(stream, "shipping", planwords.AdoptedNotCreated, "")) {
		t.Errorf("the adoption run did not say the group was adopted; it warned %q", adopt)
	}
	if _, conns := proxy.Take(); conns == 0 {
		t.Error("the tests against a server opened no connection to it")
	}

	last := acctest.EntriesSeed[len(acctest.EntriesSeed)-1]
	for name, wantDelivered := range map[string]string{"billing": "0-0", "shipping": last} {
		g, ok, err := valkeytest.Group(rdb, stream, name)
		acctest.MustDo(t, err)
		if !ok {
			t.Errorf("group %q is not on the server after the test's destroy", name)
		} else if g.LastDeliveredID != wantDelivered {
			t.Errorf("group %q was created at %s, want %s", name, g.LastDeliveredID, wantDelivered)
		}
	}
}

// TestCLIModuleTests_mockedReachNoServer: the mocked tests pass with VALKEY_URL naming a proxy
// to a real server, which sees no connection, and no provider warning is given (a mock shows
// none of them). The test files of the module are exactly the two these tests run.
func TestCLIModuleTests_mockedReachNoServer(t *testing.T) {
	t.Parallel()
	r := moduleTestRun(t, "mocked.tftest.hcl")
	proxy := faultproxy.StartProxyT(t, acctest.Server(t).Addr())
	r.env["VALKEY_URL"] = proxy.URL()

	m, res := r.test()
	m.expectPassed(t, res, "one_group_per_service", "adopted_lists_the_adopted_services", "empty_stream_is_refused")
	if _, conns := proxy.Take(); conns != 0 {
		t.Errorf("the mocked tests opened %d connections to the server", conns)
	}
	for run, warnings := range m.warnings {
		t.Errorf("mocked run %q warned %q", run, warnings)
	}

	files, err := filepath.Glob(filepath.Join(moduleDir, "tests", "*"))
	acctest.MustDo(t, err)
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	if want := []string{"mocked.tftest.hcl", "stream_groups.tftest.hcl"}; !slices.Equal(files, want) {
		t.Errorf("the module's tests are %q; TestCLIModuleTests_* run %q", files, want)
	}
}

// jsonString is s as an HCL (and JSON) string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
