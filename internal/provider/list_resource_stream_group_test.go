package provider

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The list resource is tested here at the protocol where the CLI adds nothing (results against
// import and read, the limit, errors, validation), and on the real CLI in internal/systemtest
// (TestCLIStreamGroupList_*) for `terraform query` itself: what it finds, and the
// configuration it generates.

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
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	for _, g := range []string{"billing", "team/audit"} {
		if err := rdb.XGroupCreateMkStream(t.Context(), stream, g, "$").Err(); err != nil {
			t.Fatal(err)
		}
	}
	acctest.MustDo(t, rdb.Set(t.Context(), stream+":text", "not a stream", 0).Err())
	p := newListProvider(t, acctest.Server(t).URL())

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
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	acctest.MustDo(t, rdb.XGroupCreateMkStream(t.Context(), stream, "billing", "$").Err())
	p := newListProvider(t, acctest.Server(t).URL())
	results := p.list(p.listConfig(nil, valkeytest.TagPattern(stream)), false, 100)
	if len(results) != 1 || p.identityOf(results[0]) != stream+" billing" || results[0].Resource != nil {
		t.Errorf("results %+v; want the identity of billing and no state", results)
	}
}

func TestStreamGroupList_stopsAtTheLimit(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	for i := range 5 {
		acctest.MustDo(t, rdb.XGroupCreateMkStream(t.Context(), stream, fmt.Sprintf("g%d", i), "$").Err())
	}
	p := newListProvider(t, acctest.Server(t).URL())
	if results := p.list(p.listConfig([]string{stream}, ""), false, 2); len(results) != 2 {
		t.Errorf("%d results with limit 2", len(results))
	}
}

// TestStreamGroupList_unreachableIsOneErrorNamingAddressAndStream: the stream of results ends
// with one error in errorDetail's words, for named streams and for a pattern alike.
func TestStreamGroupList_unreachableIsOneErrorNamingAddressAndStream(t *testing.T) {
	t.Parallel()
	addr := valkeytest.ClosedAddrT(t)
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
	p := newListProvider(t, acctest.Server(t).URL())
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
