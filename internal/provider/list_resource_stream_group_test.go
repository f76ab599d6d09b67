package provider

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
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The list resource is tested at the protocol where the CLI adds nothing (results against
// import and read, the limit, errors, validation), and on the real CLI (TestCLIStreamGroupList_*)
// for `terraform query` itself: what it finds, and the configuration it generates.

// listProvider is the provider's protocol server, configured with url.
type listProvider struct {
	t       *testing.T
	server  listServer
	schemas *tfprotov6.GetProviderSchemaResponse
}

// listServer is a protocol server that serves list resources too.
type listServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
}

func newListProvider(t *testing.T, url string) *listProvider {
	t.Helper()
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	lister, ok := server.(listServer)
	if !ok {
		t.Fatal("the provider's server does not serve list resources")
	}
	p := &listProvider{t: t, server: lister}
	if p.schemas, err = server.GetProviderSchema(t.Context(), &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	resp, err := server.ConfigureProvider(t.Context(), &tfprotov6.ConfigureProviderRequest{
		Config: p.value(p.schemas.Provider.ValueType(), map[string]tftypes.Value{"url": tftypes.NewValue(tftypes.String, url)}),
	})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("ConfigureProvider: %v %v", err, resp.Diagnostics)
	}
	return p
}

// value is an object of typ with the given attributes set and the others null, as a
// DynamicValue.
func (p *listProvider) value(typ tftypes.Type, set map[string]tftypes.Value) *tfprotov6.DynamicValue {
	p.t.Helper()
	dv, err := tfprotov6.NewDynamicValue(typ, objectValue(p.t, typ, set))
	if err != nil {
		p.t.Fatal(err)
	}
	return &dv
}

// listConfig is a list block's config with streams (when not nil) and match (when not empty).
func (p *listProvider) listConfig(streams []string, match string) *tfprotov6.DynamicValue {
	set := map[string]tftypes.Value{}
	if streams != nil {
		var elems []tftypes.Value
		for _, s := range streams {
			elems = append(elems, tftypes.NewValue(tftypes.String, s))
		}
		set["streams"] = tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, elems)
	}
	if match != "" {
		set["match"] = tftypes.NewValue(tftypes.String, match)
	}
	return p.value(p.schemas.ListResourceSchemas["valkey_stream_group"].ValueType(), set)
}

// list runs ListResource to its end.
func (p *listProvider) list(config *tfprotov6.DynamicValue, includeResource bool, limit int64) []tfprotov6.ListResourceResult {
	p.t.Helper()
	stream, err := p.server.ListResource(p.t.Context(), &tfprotov6.ListResourceRequest{
		TypeName: "valkey_stream_group", Config: config, IncludeResource: includeResource, Limit: limit,
	})
	if err != nil {
		p.t.Fatal(err)
	}
	return slices.Collect(stream.Results)
}

// decode reads a DynamicValue of typ into a tftypes.Value.
func (p *listProvider) decode(dv *tfprotov6.DynamicValue, typ tftypes.Type) tftypes.Value {
	p.t.Helper()
	if dv == nil {
		p.t.Fatal("no value")
	}
	v, err := dv.Unmarshal(typ)
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

// identityOf reads a result's identity as "stream name".
func (p *listProvider) identityOf(r tfprotov6.ListResourceResult) string {
	p.t.Helper()
	if r.Identity == nil {
		p.t.Fatalf("a result without identity: %+v", r)
	}
	typ := p.identitySchemaType()
	var attrs map[string]tftypes.Value
	if err := p.decode(r.Identity.IdentityData, typ).As(&attrs); err != nil {
		p.t.Fatal(err)
	}
	var stream, name string
	_ = attrs["stream"].As(&stream)
	_ = attrs["name"].As(&name)
	return stream + " " + name
}

func (p *listProvider) identitySchemaType() tftypes.Type {
	p.t.Helper()
	resp, err := p.server.GetResourceIdentitySchemas(p.t.Context(), &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil || resp.IdentitySchemas["valkey_stream_group"] == nil {
		p.t.Fatalf("GetResourceIdentitySchemas: %v", err)
	}
	return resp.IdentitySchemas["valkey_stream_group"].ValueType()
}

// errorsOf are the error diagnostics of the results.
func errorsOf(results []tfprotov6.ListResourceResult) []*tfprotov6.Diagnostic {
	var errs []*tfprotov6.Diagnostic
	for _, r := range results {
		for _, d := range r.Diagnostics {
			if d.Severity == tfprotov6.DiagnosticSeverityError {
				errs = append(errs, d)
			}
		}
	}
	return errs
}

// TestStreamGroupList_resultsAreWhatImportAndReadWrite: each result's state is byte for byte
// what an import of its identity followed by a refresh writes, so the generated configuration
// plans as an import and nothing else.
func TestStreamGroupList_resultsAreWhatImportAndReadWrite(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	for _, g := range []string{"billing", "team/audit"} {
		if err := rdb.XGroupCreateMkStream(t.Context(), stream, g, "$").Err(); err != nil {
			t.Fatal(err)
		}
	}
	mustDo(t, rdb.Set(t.Context(), stream+":text", "not a stream", 0).Err())
	p := newListProvider(t, testServer(t).URL())

	results := p.list(p.listConfig([]string{stream, stream + ":text", stream + ":missing"}, ""), true, 100)
	if errs := errorsOf(results); len(errs) > 0 || len(results) != 2 {
		t.Fatalf("%d results, errors %v; want the 2 groups of %s", len(results), errs, stream)
	}
	resourceType := p.schemas.ResourceSchemas["valkey_stream_group"].ValueType()
	for _, r := range results {
		identity := p.identityOf(r)
		name := strings.TrimPrefix(identity, stream+" ")
		if r.DisplayName != groupSubject(stream, name) {
			t.Errorf("display name %q, want %q", r.DisplayName, groupSubject(stream, name))
		}
		imported, err := p.server.ImportResourceState(t.Context(), &tfprotov6.ImportResourceStateRequest{
			TypeName: "valkey_stream_group", Identity: r.Identity,
		})
		if err != nil || len(imported.Diagnostics) > 0 || len(imported.ImportedResources) != 1 {
			t.Fatalf("ImportResourceState(%s): %v %v", identity, err, imported.Diagnostics)
		}
		read, err := p.server.ReadResource(t.Context(), &tfprotov6.ReadResourceRequest{
			TypeName: "valkey_stream_group", CurrentState: imported.ImportedResources[0].State, CurrentIdentity: imported.ImportedResources[0].Identity,
		})
		if err != nil || len(read.Diagnostics) > 0 {
			t.Fatalf("ReadResource(%s): %v %v", identity, err, read.Diagnostics)
		}
		if got, want := p.decode(r.Resource, resourceType), p.decode(read.NewState, resourceType); !got.Equal(want) {
			t.Errorf("result %s has state\n%v\nimport and refresh write\n%v", identity, got, want)
		}
	}
}

func TestStreamGroupList_withoutResourceGivesIdentitiesOnly(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	mustDo(t, rdb.XGroupCreateMkStream(t.Context(), stream, "billing", "$").Err())
	p := newListProvider(t, testServer(t).URL())
	results := p.list(p.listConfig(nil, valkeytest.TagPattern(stream)), false, 100)
	if len(results) != 1 || p.identityOf(results[0]) != stream+" billing" || results[0].Resource != nil {
		t.Errorf("results %+v; want the identity of billing and no state", results)
	}
}

func TestStreamGroupList_stopsAtTheLimit(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	for i := range 5 {
		mustDo(t, rdb.XGroupCreateMkStream(t.Context(), stream, fmt.Sprintf("g%d", i), "$").Err())
	}
	p := newListProvider(t, testServer(t).URL())
	if results := p.list(p.listConfig([]string{stream}, ""), false, 2); len(results) != 2 {
		t.Errorf("%d results with limit 2", len(results))
	}
}

// TestStreamGroupList_unreachableIsOneErrorNamingAddressAndStream: the stream of results ends
// with one error in errorDetail's words, for named streams and for a pattern alike.
func TestStreamGroupList_unreachableIsOneErrorNamingAddressAndStream(t *testing.T) {
	t.Parallel()
	addr := closedAddr(t)
	p := newListProvider(t, "valkey://"+addr+"/0")
	for config, subject := range map[*tfprotov6.DynamicValue]string{
		p.listConfig([]string{"orders", "payments"}, ""): `the consumer groups of stream "orders"`,
		p.listConfig(nil, "orders:*"):                    `the streams matching "orders:*"`,
	} {
		results := p.list(config, true, 100)
		if len(results) != 1 || len(errorsOf(results)) != 1 {
			t.Fatalf("results %+v; want one error", results)
		}
		d := errorsOf(results)[0]
		if d.Summary != "Consumer Groups Not Listed" || !strings.Contains(d.Detail, addr) || !strings.Contains(d.Detail, subject) ||
			!strings.Contains(d.Detail, "Nothing is listening there") {
			t.Errorf("error %q: %q; want the address %s, %s, and advice", d.Summary, d.Detail, addr, subject)
		}
	}
}

func TestStreamGroupList_validateRequiresStreamsOrMatch(t *testing.T) {
	t.Parallel()
	p := newListProvider(t, testServer(t).URL())
	for _, tc := range []struct {
		config *tfprotov6.DynamicValue
		want   string // how the summary of the one error begins, or "" for none
	}{
		{p.listConfig(nil, ""), "Streams Or Match Required"},
		{p.listConfig([]string{"orders"}, ""), ""},
		{p.listConfig(nil, "orders:*"), ""},
		{p.listConfig([]string{}, ""), "Invalid Attribute Value"},
		{p.listConfig([]string{""}, ""), "Invalid Attribute Value"},
	} {
		resp, err := p.server.ValidateListResourceConfig(t.Context(), &tfprotov6.ValidateListResourceConfigRequest{
			TypeName: "valkey_stream_group", Config: tc.config,
		})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.want == "" && len(resp.Diagnostics) > 0:
			t.Errorf("diagnostics %v, want none", resp.Diagnostics)
		case tc.want != "" && (len(resp.Diagnostics) != 1 || !strings.HasPrefix(resp.Diagnostics[0].Summary, tc.want)):
			t.Errorf("diagnostics %v, want one %q", summaries(resp.Diagnostics), tc.want)
		case tc.want == "Streams Or Match Required" && !resp.Diagnostics[0].Attribute.Equal(tftypes.NewAttributePath().WithAttributeName("streams")):
			t.Errorf("the error is on %v, want streams", resp.Diagnostics[0].Attribute)
		}
	}
}

// summaries lists the diagnostics as "summary: detail", for failure messages.
func summaries(diags []*tfprotov6.Diagnostic) []string {
	var s []string
	for _, d := range diags {
		s = append(s, d.Summary+": "+d.Detail)
	}
	return s
}

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
	rdb, prefix := testAdmin(t, testServer(t)), valkeytest.Key(t, "emq:{%s}:")
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
	mustDo(t, rdb.Set(t.Context(), prefix+"orders/text", "not a stream", 0).Err())
	mustDo(t, rdb.HSet(t.Context(), prefix+"payments/hash", "f", "v").Err())
	r := newQueryRun(t, testAccProviderConfig(testServer(t)),
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
	if !slices.Contains(found.displayNames, groupSubject(prefix+"orders/eu", "team/audit")) {
		t.Errorf("display names %q do not name group team/audit of %s", found.displayNames, prefix+"orders/eu")
	}
	if keyExists(t, rdb, prefix+"missing") {
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
		mustDo(t, admin.XGroupCreateMkStream(t.Context(), stream, "team/billing", "$").Err())
		want = append(want, stream+" team/billing")
	}
	mustDo(t, admin.Set(t.Context(), "emq:{tenant-x}:stream/main", "not a stream", 0).Err())
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
	rdb := testAdmin(t, srv)
	listed := map[string][]string{"orders/eu": {"billing", "team/audit"}, "orders/us": {"billing"}}
	for stream, groups := range listed {
		for _, g := range groups {
			mustDo(t, rdb.XGroupCreateMkStream(t.Context(), stream, g, "$").Err())
		}
	}
	mustDo(t, rdb.XGroupCreateMkStream(t.Context(), "payments", "billing", "$").Err()) // not matched: stays out
	r := newQueryRun(t, testAccProviderConfig(srv), queryConfig("orders", `match = "orders/*"`))

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
	if errs := findDiagnostic(r.plan().must(t, false).diags, tfjson.DiagnosticSeverityError, "Group Start Not Declared"); len(errs) != 3 {
		t.Errorf("%d Group Start Not Declared errors before the start is declared, want one per group (3)", len(errs))
	}
	// The user declares the start of every group, then applies.
	writeFile(t, path, strings.ReplaceAll(string(generated), "group_start = null", `group_start = "new"`))
	mustDo(t, rdb.ConfigResetStat(t.Context()).Err())
	res := r.apply().must(t, true)
	if n := valkeytest.CommandCalls(t, rdb, "xgroup|create"); n != 0 {
		t.Errorf("apply sent XGROUP CREATE %d times, want none", n)
	}
	if s := res.summary; s == nil || s.Import != 3 || s.Add != 0 || s.Remove != 0 {
		t.Errorf("apply summary %+v, want 3 imported and nothing added or removed", s)
	}
	var inState []string
	for _, g := range r.stateGroups() {
		inState = append(inState, g.Stream+" "+g.Name)
		if !g.Adopted || g.GroupStart == nil || *g.GroupStart != "new" || g.ID != groupID(g.Stream, g.Name) ||
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
	addr := closedAddr(t)
	r := newQueryRun(t, fmt.Sprintf("provider \"valkey\" {\n  url = %q\n}\n", "valkey://"+addr+"/0"), queryConfig("orders", `match = "orders/*"`))
	res := r.query().must(t, false)
	errs := findDiagnostic(res.diags, tfjson.DiagnosticSeverityError, "Consumer Groups Not Listed")
	if len(errs) != 1 || !strings.Contains(unwrap(errs[0].Detail), addr) || !strings.Contains(unwrap(errs[0].Detail), `the streams matching "orders/*"`) {
		t.Errorf("diagnostics %+v; want one error naming %s and the pattern", res.diags, addr)
	}
}

func TestCLIStreamGroupList_configWithoutStreamsOrMatchFailsOnTheAttribute(t *testing.T) {
	t.Parallel()
	r := newQueryRun(t, testAccProviderConfig(testServer(t)), queryConfig("nothing", ""))
	res := r.query().must(t, false)
	if errs := findDiagnostic(res.diags, tfjson.DiagnosticSeverityError, "Streams Or Match Required"); len(errs) != 1 {
		t.Errorf("diagnostics %+v; want Streams Or Match Required", res.diags)
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	port, err := valkeytest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}
