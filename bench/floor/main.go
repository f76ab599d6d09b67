// Command terraform-provider-valkeyfloor is the plugin floor for `make bench`: a framework
// provider with exactly the schema of the Valkey provider and of valkey_stream_group that
// sends no command at all. Everything the real provider costs above it is ours.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/echomq/terraform-provider-valkey/internal/pluginserver"
	valkeyprovider "github.com/echomq/terraform-provider-valkey/internal/provider"
)

func main() {
	// Served as main.go serves ours (same logging, same release of ended requests): the floor
	// pays what we pay.
	err := pluginserver.Serve(context.Background(), func() provider.Provider { return floorProvider{} }, providerserver.ServeOpts{
		Address: "registry.terraform.io/echomq/valkeyfloor",
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}

var (
	_ provider.Provider = floorProvider{}
	_ resource.Resource = floorGroup{}
)

// floorProvider borrows the real provider's schema and configures nothing.
type floorProvider struct{}

func (floorProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "valkeyfloor"
}

func (floorProvider) Schema(ctx context.Context, req provider.SchemaRequest, resp *provider.SchemaResponse) {
	valkeyprovider.New("floor")().Schema(ctx, req, resp)
}

func (floorProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (floorProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return floorGroup{} }}
}

func (floorProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

func (floorProvider) Functions(context.Context) []func() function.Function { return nil }

// floorGroup has valkey_stream_group's schema and identity schema (same validators and plan
// modifiers) and does the least a resource can: Create fills the computed attributes and the
// identity, the rest keep state as is and fill the identity where the framework asks for one.
type floorGroup struct{}

var (
	_ resource.ResourceWithIdentity   = floorGroup{}
	_ resource.ResourceWithModifyPlan = floorGroup{}
)

// EnvWarn makes the floor warn once per resource in every plan that creates or destroys it,
// and once more in each Delete: "attribute" puts the warning on group_start, "resource" on
// the resource (no attribute path), "empty" on an attribute path of no steps (what ours
// does). Unset, the floor says nothing. It is the reproduction of bench/notes.md's report to
// Terraform: the cost of provider warnings, with only the framework involved.
const EnvWarn = "BENCH_FLOOR_WARN"

var warnMode = os.Getenv(EnvWarn)

// warn adds the floor's warning about the group named in m.
func warn(diags *diag.Diagnostics, m floorGroupModel, what string) {
	summary := fmt.Sprintf("Group %q of %q %s", m.Name.ValueString(), m.Stream.ValueString(), what)
	detail := "The plugin floor warns about every resource, so that the cost of a warning can be measured."
	switch warnMode {
	case "attribute":
		diags.AddAttributeWarning(path.Root("group_start"), summary, detail)
	case "resource":
		diags.AddWarning(summary, detail)
	case "empty":
		diags.AddAttributeWarning(path.Empty(), summary, detail)
	}
}

func (floorGroup) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if warnMode == "" || !req.State.Raw.IsNull() && !req.Plan.Raw.IsNull() {
		return // only creates and destroys warn
	}
	var m floorGroupModel
	if req.Plan.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
		warn(&resp.Diagnostics, m, "Will Stay On Server")
		return
	}
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	warn(&resp.Diagnostics, m, "Will Be Warned")
}

type floorIdentity struct {
	Stream types.String `tfsdk:"stream"`
	Name   types.String `tfsdk:"name"`
}

func (floorGroup) IdentitySchema(ctx context.Context, req resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	if withIdentity, ok := valkeyprovider.NewStreamGroupResource().(resource.ResourceWithIdentity); ok {
		withIdentity.IdentitySchema(ctx, req, resp)
	}
}

type floorGroupModel struct {
	ID         types.String `tfsdk:"id"`
	Stream     types.String `tfsdk:"stream"`
	Name       types.String `tfsdk:"name"`
	GroupStart types.String `tfsdk:"group_start"`
	Adopted    types.Bool   `tfsdk:"adopted"`
}

func (floorGroup) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_stream_group"
}

func (floorGroup) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	valkeyprovider.NewStreamGroupResource().Schema(ctx, req, resp)
}

func (floorGroup) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan floorGroupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = types.StringValue(plan.Stream.ValueString() + "/" + plan.Name.ValueString())
	plan.Adopted = types.BoolValue(false)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	resp.Diagnostics.Append(resp.Identity.Set(ctx, floorIdentity{Stream: plan.Stream, Name: plan.Name})...)
}

// Read keeps the prior state, which the framework has already copied into resp, and fills the
// identity when the prior state has none (Terraform before 1.12 keeps none), as ours does.
func (floorGroup) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if req.Identity != nil && !req.Identity.Raw.IsFullyNull() {
		return
	}
	var stream, name types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("stream"), &stream)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(resp.Identity.Set(ctx, floorIdentity{Stream: stream, Name: name})...)
}

func (floorGroup) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw // the identity, planned, is already in resp
}

// Delete leaves nothing to do but warn when asked: the framework removes the resource from state.
func (floorGroup) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if warnMode == "" {
		return
	}
	var m floorGroupModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	warn(&resp.Diagnostics, m, "Left On Server")
}
