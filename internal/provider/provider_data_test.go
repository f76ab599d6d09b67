package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/echomq/terraform-provider-valkey/internal/planwords"
)

// configureWith runs the provider's Configure with config and returns what it hands to
// resources and data sources.
func configureWith(t *testing.T, config types.Object) *providerData {
	t.Helper()
	ctx := context.Background()
	p := New("test")()
	var schemaResp fwprovider.SchemaResponse
	p.Schema(ctx, fwprovider.SchemaRequest{}, &schemaResp)
	raw, err := config.ToTerraformValue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var resp fwprovider.ConfigureResponse
	p.Configure(ctx, fwprovider.ConfigureRequest{Config: tfsdk.Config{Schema: schemaResp.Schema, Raw: raw}}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("Configure: %v", resp.Diagnostics)
	}
	data, ok := resp.ResourceData.(*providerData)
	if !ok || resp.DataSourceData != resp.ResourceData {
		t.Fatalf("Configure handed %T and %T", resp.ResourceData, resp.DataSourceData)
	}
	return data
}

// expectOne fails unless diags hold exactly one diagnostic, of severity, summary and detail.
func expectOne(t *testing.T, what string, diags diag.Diagnostics, severity diag.Severity, summary, detail string) {
	t.Helper()
	if len(diags) != 1 || diags[0].Severity() != severity || diags[0].Summary() != summary || diags[0].Detail() != detail {
		t.Errorf("%s: got %v, want one %v %q: %q", what, diags, severity, summary, detail)
	}
}

// TestUnknownConfiguration_EveryEntryPointSaysSo: a configuration that depends on values known
// only after apply makes no client, so nothing can dial; every entry point that needs the
// server says why it could not ask it, in the same words, and writes no state. The plan says
// it once, however many groups it plans.
func TestUnknownConfiguration_EveryEntryPointSaysSo(t *testing.T) {
	ctx := context.Background()
	data := configureWith(t, configOf(t, map[string]attr.Value{"url": types.StringUnknown(), "tls": unknownObject(t, "tls")}))
	if data.client != nil || data.unknown == nil || fmt.Sprint(data.unknown.settings) != "[tls url]" {
		t.Fatalf("Configure handed client %v, unknown %+v; want no client and tls, url unknown", data.client, data.unknown)
	}
	unknown := func(subject string) string {
		return "The provider configuration was unknown when this operation ran (tls, url depends on values known only after " +
			"apply), so no server could be asked about " + subject + ".\n\nThe provider's configuration depends on values known " +
			"only after apply (for example a url taken from a resource not created yet). Apply the resources it depends on " +
			"first (terraform apply -target=...), or configure the provider with known values."
	}

	r := &streamGroupResource{}
	r.Configure(ctx, resource.ConfigureRequest{ProviderData: data}, &resource.ConfigureResponse{})
	var schemaResp resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &schemaResp)
	var identityResp resource.IdentitySchemaResponse
	r.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &identityResp)
	typ := schemaResp.Schema.Type().TerraformType(ctx)
	null := tfsdk.State{Schema: schemaResp.Schema, Raw: tftypes.NewValue(typ, nil)}
	identity := func() *tfsdk.ResourceIdentity {
		return &tfsdk.ResourceIdentity{Schema: identityResp.IdentitySchema, Raw: tftypes.NewValue(identityResp.IdentitySchema.Type().TerraformType(ctx), nil)}
	}
	planOf := func(name string) tfsdk.Plan {
		plan := tfsdk.Plan{Schema: schemaResp.Schema, Raw: tftypes.NewValue(typ, nil)}
		if diags := plan.Set(ctx, streamGroupModel{ID: types.StringUnknown(), Stream: types.StringValue("s"), Name: types.StringValue(name),
			GroupStart: types.StringValue("new"), Adopted: types.BoolUnknown()}); diags.HasError() {
			t.Fatal(diags)
		}
		return plan
	}

	for i, name := range []string{"g", "h"} {
		resp := resource.ModifyPlanResponse{Plan: planOf(name)}
		r.ModifyPlan(ctx, resource.ModifyPlanRequest{Plan: planOf(name), State: null}, &resp)
		if i > 0 {
			if len(resp.Diagnostics) > 0 {
				t.Errorf("the plan of a second group says it again: %v", resp.Diagnostics)
			}
			continue
		}
		expectOne(t, "plan", resp.Diagnostics, diag.SeverityWarning, planwords.PlanCheckSkipped,
			"The provider could not ask the server whether the planned groups already exist (first tried: group \"g\" of stream "+
				"\"s\"), so this plan cannot say which will be adopted, what they will replay or skip, or whether a key holds "+
				"another type. Apply still sends XGROUP CREATE and fails loudly on any refusal.\n\n"+unknown(`group "g" of stream "s"`))
	}

	create := resource.CreateResponse{State: null, Identity: identity()}
	r.Create(ctx, resource.CreateRequest{Plan: planOf("g")}, &create)
	expectOne(t, "create", create.Diagnostics, diag.SeverityError, "Consumer Group Not Created", unknown(`group "g" of stream "s"`))
	if !create.State.Raw.IsNull() {
		t.Errorf("create wrote state: %v", create.State.Raw)
	}

	state := tfsdk.State{Schema: schemaResp.Schema}
	if d := state.Set(ctx, streamGroupModel{ID: types.StringValue("s/g"), Stream: types.StringValue("s"), Name: types.StringValue("g"),
		GroupStart: types.StringValue("new"), Adopted: types.BoolValue(false)}); d.HasError() {
		t.Fatalf("state.Set: %v", d)
	}
	read := resource.ReadResponse{State: state, Identity: identity()}
	r.Read(ctx, resource.ReadRequest{State: state}, &read)
	expectOne(t, "read", read.Diagnostics, diag.SeverityError, "Consumer Group Not Read", unknown(`group "g" of stream "s"`))
	if !read.State.Raw.Equal(state.Raw) {
		t.Errorf("read changed state to %v", read.State.Raw)
	}

	for _, tc := range []struct {
		source           datasource.DataSourceWithConfigure
		summary, subject string
	}{
		{&streamDataSource{}, "Stream Not Read", `stream "s"`},
		{&streamGroupDataSource{}, "Consumer Group Not Read", `group "g" of stream "s"`},
	} {
		tc.source.Configure(ctx, datasource.ConfigureRequest{ProviderData: data}, &datasource.ConfigureResponse{})
		var schemaResp datasource.SchemaResponse
		tc.source.Schema(ctx, datasource.SchemaRequest{}, &schemaResp)
		typ, _ := schemaResp.Schema.Type().TerraformType(ctx).(tftypes.Object)
		values := map[string]tftypes.Value{}
		for name, attrType := range typ.AttributeTypes {
			values[name] = tftypes.NewValue(attrType, map[string]any{"key": "s", "stream": "s", "name": "g"}[name])
		}
		resp := datasource.ReadResponse{State: tfsdk.State{Schema: schemaResp.Schema, Raw: tftypes.NewValue(typ, nil)}}
		tc.source.Read(ctx, datasource.ReadRequest{Config: tfsdk.Config{Schema: schemaResp.Schema, Raw: tftypes.NewValue(typ, values)}}, &resp)
		expectOne(t, tc.summary, resp.Diagnostics, diag.SeverityError, tc.summary, unknown(tc.subject))
	}
}
