package systemtest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// `terraform query` on the real CLI: what it finds, and the configuration it generates. The
// list resource's protocol tests are in internal/provider.

// queryConfig is a list block named name whose config block holds body.
func queryConfig(name, body string) string {
	return fmt.Sprintf("list \"valkey_stream_group\" %q {\n  provider = valkey\n  config {\n    %s\n  }\n}\n", name, body)
}

// newQueryRun is newCLIRun for `terraform query`: it skips on CLIs without it (Terraform
// before 1.14, and OpenTofu 1.12, which terraform-exec refuses as older than 1.14), and writes
// query as the query file.
func newQueryRun(t *testing.T, config, query string) *cliRun {
	t.Helper()
	needCLI(t)
	if v := cliVersion(t); v.LessThan(version.Must(version.NewVersion("1.14.0"))) {
		t.Skipf("%s (version %s) has no query command; Terraform 1.14 and later have it, OpenTofu 1.12 does not",
			filepath.Base(os.Getenv("TF_ACC_TERRAFORM_PATH")), v)
	}
	r := newCLIRun(t, config)
	r.put("groups.tfquery.hcl", query)
	return r
}

// queryFound is what a query found: "stream name" per list block address, and the display
// names.
type queryFound struct {
	groups       map[string][]string // "list.valkey_stream_group.x" -> sorted "stream name"
	displayNames []string
}

// foundBy reads what the query run res found.
func foundBy(res cliResult) queryFound {
	found := queryFound{groups: map[string][]string{}}
	for _, f := range res.found {
		found.groups[f.Address] = append(found.groups[f.Address], fmt.Sprintf("%v %v", f.Identity["stream"], f.Identity["name"]))
		found.displayNames = append(found.displayNames, f.DisplayName)
	}
	for _, groups := range found.groups {
		slices.Sort(groups)
	}
	return found
}

// TestCLIStreamGroupList_findsNamedAndMatchedGroups: `terraform query` lists the groups of
// named streams and of the streams a pattern matches, names with "/" as they are; keys that
// share the pattern's prefix without matching it, keys of other types and missing keys yield
// nothing.
func TestCLIStreamGroupList_findsNamedAndMatchedGroups(t *testing.T) {
	t.Parallel()
	rdb, prefix := acctest.Admin(t, acctest.Server(t)), valkeytest.Key(t, "emq:{%s}:")
	for stream, groups := range map[string][]string{
		prefix + "orders/eu": {"billing", "team/audit"},
		prefix + "orders/us": {"billing"},
		prefix + "ordersX":   {"billing"},
		prefix + "payments":  {"billing"},
	} {
		for _, g := range groups {
			if err := rdb.XGroupCreateMkStream(t.Context(), stream, g, "$").Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	acctest.MustDo(t, rdb.Set(t.Context(), prefix+"orders/text", "not a stream", 0).Err())
	acctest.MustDo(t, rdb.HSet(t.Context(), prefix+"payments/hash", "f", "v").Err())
	r := newQueryRun(t, acctest.ProviderConfig(acctest.Server(t)),
		queryConfig("orders", fmt.Sprintf("match = %q", prefix+"orders/*"))+
			queryConfig("named", fmt.Sprintf("streams = [%q, %q, %q]", prefix+"payments", prefix+"payments/hash", prefix+"missing")))

	found := foundBy(r.query().must(t, true))
	want := map[string][]string{
		"list.valkey_stream_group.orders": {prefix + "orders/eu billing", prefix + "orders/eu team/audit", prefix + "orders/us billing"},
		"list.valkey_stream_group.named":  {prefix + "payments billing"},
	}
	if !maps.EqualFunc(found.groups, want, slices.Equal) {
		t.Errorf("terraform query found %q, want %q", found.groups, want)
	}
	if !slices.Contains(found.displayNames, fmt.Sprintf("group %q of stream %q", "team/audit", prefix+"orders/eu")) {
		t.Errorf("display names %q do not name group team/audit of %s", found.displayNames, prefix+"orders/eu")
	}
	n, err := rdb.Exists(t.Context(), prefix+"missing").Result()
	acctest.MustDo(t, err)
	if n != 0 {
		t.Errorf("the query created %s", prefix+"missing")
	}
}

// TestCLIStreamGroupList_clusterScansEveryPrimary: with the cluster attribute, a pattern finds
// the groups on every primary.
func TestCLIStreamGroupList_clusterScansEveryPrimary(t *testing.T) {
	t.Parallel()
	r := newQueryRun(t, "", queryConfig("tenants", `match = "emq:{tenant-*}:stream/main"`)) // skips before a cluster starts
	cluster := valkeytest.StartClusterT(t, 3, 0)
	admin := cluster.Client()
	t.Cleanup(func() { _ = admin.Close() })
	var want []string
	for i := range 9 {
		stream := fmt.Sprintf("emq:{tenant-%d}:stream/main", i)
		acctest.MustDo(t, admin.XGroupCreateMkStream(t.Context(), stream, "team/billing", "$").Err())
		want = append(want, stream+" team/billing")
	}
	acctest.MustDo(t, admin.Set(t.Context(), "emq:{tenant-x}:stream/main", "not a stream", 0).Err())
	slices.Sort(want)
	r.write(fmt.Sprintf("provider \"valkey\" {\n  cluster = {\n    addresses = [%q]\n  }\n}\n", cluster.Addrs()[0]))

	if got := foundBy(r.query().must(t, true)).groups["list.valkey_stream_group.tenants"]; !slices.Equal(got, want) {
		t.Errorf("terraform query found %q, want %q", got, want)
	}
}

// TestCLIStreamGroupList_generatedConfigImportsWhatWasListedAndCreatesNothing is the adoption
// path end to end: `terraform query -generate-config-out`, a plan that fails until the start is
// declared, the start declared in the generated file, apply (imports exactly the listed groups,
// sends no XGROUP CREATE), and a clean re-plan.
func TestCLIStreamGroupList_generatedConfigImportsWhatWasListedAndCreatesNothing(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t) // its own, so that the command counts are this test's
	rdb := acctest.Admin(t, srv)
	listed := map[string][]string{"orders/eu": {"billing", "team/audit"}, "orders/us": {"billing"}}
	for stream, groups := range listed {
		for _, g := range groups {
			acctest.MustDo(t, rdb.XGroupCreateMkStream(t.Context(), stream, g, "$").Err())
		}
	}
	acctest.MustDo(t, rdb.XGroupCreateMkStream(t.Context(), "payments", "billing", "$").Err()) // not matched: stays out
	r := newQueryRun(t, acctest.ProviderConfig(srv), queryConfig("orders", `match = "orders/*"`))

	r.query(tfexec.GenerateConfigOut("generated.tf")).must(t, true)
	path := filepath.Join(r.dir, "generated.tf")
	generated, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(generated), "group_start = null"); n != 3 {
		t.Errorf("generated.tf writes group_start = null %d times, want once per group (3):\n%s", n, generated)
	}
	if regexp.MustCompile(`group_start\s*=\s*"`).Match(generated) {
		t.Errorf("generated.tf guesses a start:\n%s", generated)
	}
	for stream, groups := range listed {
		for _, g := range groups {
			if !strings.Contains(string(generated), fmt.Sprintf("name   = %q\n    stream = %q", g, stream)) {
				t.Errorf("generated.tf has no import block for group %s of %s:\n%s", g, stream, generated)
			}
		}
	}

	// Until the start is declared, the plan fails on it: the provider never picks one.
	if errs := diagtest.Find(r.plan().must(t, false).diags, tfjson.DiagnosticSeverityError, "Group Start Not Declared"); len(errs) != 3 {
		t.Errorf("%d Group Start Not Declared errors before the start is declared, want one per group (3)", len(errs))
	}
	// The user declares the start of every group, then applies.
	writeFile(t, path, strings.ReplaceAll(string(generated), "group_start = null", `group_start = "new"`))
	acctest.MustDo(t, rdb.ConfigResetStat(t.Context()).Err())
	res := r.apply().must(t, true)
	if n := valkeytest.CommandCalls(t, rdb, "xgroup|create"); n != 0 {
		t.Errorf("apply sent XGROUP CREATE %d times, want none", n)
	}
	if s := res.summary; s == nil || s.Import != 3 || s.Add != 0 || s.Remove != 0 {
		t.Errorf("apply summary %+v, want 3 imported and nothing added or removed", s)
	}
	ids := map[string]string{ // the ID of each listed group: the stream, "/", the name with "/" escaped
		"orders/eu billing": "orders/eu/billing", "orders/eu team/audit": "orders/eu/team%2Faudit", "orders/us billing": "orders/us/billing",
	}
	var inState []string
	for _, g := range r.stateGroups() {
		inState = append(inState, g.Stream+" "+g.Name)
		if !g.Adopted || g.GroupStart == nil || *g.GroupStart != "new" || g.ID != ids[g.Stream+" "+g.Name] ||
			g.Identity["stream"] != g.Stream || g.Identity["name"] != g.Name {
			t.Errorf("in state: %+v; want adopted, group_start new, its ID and identity", g)
		}
	}
	slices.Sort(inState)
	if want := []string{"orders/eu billing", "orders/eu team/audit", "orders/us billing"}; !slices.Equal(inState, want) {
		t.Errorf("state holds %q, want the listed groups %q", inState, want)
	}
	r.expectEmptyPlan()
}

func TestCLIStreamGroupList_unreachableServerFailsTheQueryNamingTheAddress(t *testing.T) {
	t.Parallel()
	addr := valkeytest.ClosedAddrT(t)
	r := newQueryRun(t, fmt.Sprintf("provider \"valkey\" {\n  url = %q\n}\n", "valkey://"+addr+"/0"), queryConfig("orders", `match = "orders/*"`))
	res := r.query().must(t, false)
	errs := diagtest.Find(res.diags, tfjson.DiagnosticSeverityError, "Consumer Groups Not Listed")
	if len(errs) != 1 || !strings.Contains(diagtest.Unwrap(errs[0].Detail), addr) || !strings.Contains(diagtest.Unwrap(errs[0].Detail), `the streams matching "orders/*"`) {
		t.Errorf("diagnostics %+v; want one error naming %s and the pattern", res.diags, addr)
	}
}

func TestCLIStreamGroupList_configWithoutStreamsOrMatchFailsOnTheAttribute(t *testing.T) {
	t.Parallel()
	r := newQueryRun(t, acctest.ProviderConfig(acctest.Server(t)), queryConfig("nothing", ""))
	res := r.query().must(t, false)
	if errs := diagtest.Find(res.diags, tfjson.DiagnosticSeverityError, "Streams Or Match Required"); len(errs) != 1 {
		t.Errorf("diagnostics %+v; want Streams Or Match Required", res.diags)
	}
}
