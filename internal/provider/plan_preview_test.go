package provider

import (
	"maps"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
)

// What one group's plan says (the replay, skip, adopt and stream-created previews) is checked by
// calling ModifyPlan directly, against a real server: the CLI adds nothing to it. What needs
// Terraform (a plan of many groups in one provider process, state, saved plans, apply, the
// terminal) runs on the real CLI (TestCLIStreamGroup_* in internal/systemtest).

// planPreview is valkey_stream_group configured as the provider's Configure configures it, for
// calling its ModifyPlan as Terraform does when it plans a create.
type planPreview struct {
	t      *testing.T
	r      *streamGroupResource
	schema schema.Schema
}

// newPlanPreview configures the provider with the provider block's string settings (url,
// username, password) and returns its valkey_stream_group resource.
func newPlanPreview(t *testing.T, settings map[string]string) *planPreview {
	t.Helper()
	ctx := t.Context()
	configured := configureProvider(t, settings)
	r := &streamGroupResource{}
	var resp resource.ConfigureResponse
	r.Configure(ctx, resource.ConfigureRequest{ProviderData: configured.ResourceData}, &resp)
	if resp.Diagnostics.HasError() || r.data == nil {
		t.Fatalf("Configure of the resource: %v", resp.Diagnostics)
	}
	t.Cleanup(func() { _ = r.data.client.Close() })
	var s resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &s)
	return &planPreview{t: t, r: r, schema: s.Schema}
}

// configureProvider runs the provider's Configure with the provider block's string settings
// (url, username, password), as Terraform does before it plans or reads.
func configureProvider(t *testing.T, settings map[string]string) provider.ConfigureResponse {
	t.Helper()
	ctx := t.Context()
	p := New("test")()
	var providerSchema provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &providerSchema)
	set := map[string]tftypes.Value{}
	for name, v := range settings {
		set[name] = tftypes.NewValue(tftypes.String, v)
	}
	var configured provider.ConfigureResponse
	p.Configure(ctx, provider.ConfigureRequest{Config: tfsdk.Config{
		Schema: providerSchema.Schema, Raw: objectValue(t, providerSchema.Schema.Type().TerraformType(ctx), set),
	}}, &configured)
	if configured.Diagnostics.HasError() {
		t.Fatalf("Configure: %v", configured.Diagnostics)
	}
	return configured
}

// readDataSource reads a data source configured as the provider's Configure configures it, with
// the given arguments, as Terraform does when it reads one, and returns the state it sets.
func readDataSource(t *testing.T, settings map[string]string, d datasource.DataSourceWithConfigure, args map[string]tftypes.Value) tfsdk.State {
	t.Helper()
	ctx := t.Context()
	configured := configureProvider(t, settings)
	var resp datasource.ConfigureResponse
	d.Configure(ctx, datasource.ConfigureRequest{ProviderData: configured.DataSourceData}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("Configure of the data source: %v", resp.Diagnostics)
	}
	var s datasource.SchemaResponse
	d.Schema(ctx, datasource.SchemaRequest{}, &s)
	typ := s.Schema.Type().TerraformType(ctx)
	read := datasource.ReadResponse{State: tfsdk.State{Schema: s.Schema, Raw: tftypes.NewValue(typ, nil)}}
	d.Read(ctx, datasource.ReadRequest{Config: tfsdk.Config{Schema: s.Schema, Raw: objectValue(t, typ, args)}}, &read)
	if read.Diagnostics.HasError() {
		t.Fatalf("Read: %v", read.Diagnostics)
	}
	return read.State
}

// create is what the plan of group "billing" on stream says when it creates the group:
// ModifyPlan with no prior state, and id and adopted unknown. start is a string, or
// tftypes.UnknownValue for a value known only at apply.
func (p *planPreview) create(stream string, start any) []diagtest.Diagnostic {
	p.t.Helper()
	ctx, typ := p.t.Context(), p.schema.Type().TerraformType(p.t.Context())
	declared := map[string]tftypes.Value{
		"stream":      tftypes.NewValue(tftypes.String, stream),
		"name":        tftypes.NewValue(tftypes.String, "billing"),
		"group_start": tftypes.NewValue(tftypes.String, start),
	}
	planned := maps.Clone(declared)
	planned["id"] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
	planned["adopted"] = tftypes.NewValue(tftypes.Bool, tftypes.UnknownValue)
	req := resource.ModifyPlanRequest{
		Config: tfsdk.Config{Schema: p.schema, Raw: objectValue(p.t, typ, declared)},
		Plan:   tfsdk.Plan{Schema: p.schema, Raw: objectValue(p.t, typ, planned)},
		State:  tfsdk.State{Schema: p.schema, Raw: tftypes.NewValue(typ, nil)},
	}
	resp := resource.ModifyPlanResponse{Plan: req.Plan}
	p.r.ModifyPlan(ctx, req, &resp)
	diags := make([]diagtest.Diagnostic, len(resp.Diagnostics))
	for i, d := range resp.Diagnostics {
		diags[i] = diagtest.Diagnostic{Diagnostic: tfjson.Diagnostic{Severity: tfjson.DiagnosticSeverityWarning, Summary: d.Summary(), Detail: d.Detail()}}
		if d.Severity() == diag.SeverityError {
			diags[i].Severity = tfjson.DiagnosticSeverityError
		}
		if d, ok := d.(diag.DiagnosticWithPath); ok {
			attribute := d.Path()
			diags[i].Attribute = &attribute
		}
	}
	return diags
}

// objectValue is an object of typ with the given attributes set and the others null.
func objectValue(t *testing.T, typ tftypes.Type, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	object, ok := typ.(tftypes.Object)
	if !ok {
		t.Fatalf("%v is not an object type", typ)
	}
	attrs := map[string]tftypes.Value{}
	for name, at := range object.AttributeTypes {
		attrs[name] = tftypes.NewValue(at, nil)
	}
	maps.Copy(attrs, set)
	return tftypes.NewValue(typ, attrs)
}
