package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

var (
	_ resource.Resource                = (*streamGroupResource)(nil)
	_ resource.ResourceWithConfigure   = (*streamGroupResource)(nil)
	_ resource.ResourceWithImportState = (*streamGroupResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*streamGroupResource)(nil)
)

// NewStreamGroupResource returns the valkey_stream_group resource.
func NewStreamGroupResource() resource.Resource { return &streamGroupResource{} }

type streamGroupResource struct {
	data *providerData
}

type streamGroupModel struct {
	ID         types.String `tfsdk:"id"`
	Stream     types.String `tfsdk:"stream"`
	Name       types.String `tfsdk:"name"`
	GroupStart types.String `tfsdk:"group_start"`
	Adopted    types.Bool   `tfsdk:"adopted"`
}

func (r *streamGroupResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_stream_group"
}

func (r *streamGroupResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Ensures a consumer group exists on a stream with one `XGROUP CREATE <stream> <name> <$|0> MKSTREAM`. " +
			"An existing group is adopted, not changed. Destroying the resource only removes it from state: " +
			"the group and the stream's entries stay on the server.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "`<stream>/<name>`, the import ID.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"stream": schema.StringAttribute{
				MarkdownDescription: "Stream key, for example `emq:{orders}:stream:main`. Created with the group when absent. Changing it plans a new group; the old one stays on the server.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Consumer group name. Changing it plans a new group; the old one stays on the server.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"group_start": schema.StringAttribute{
				MarkdownDescription: "Where a newly created group starts reading: `new` (sends `$`: only entries appended from now on) " +
					"or `head` (sends `0`: replay every entry already in the stream). No default: the choice is always declared. " +
					"It applies only when the group is created; an adopted group keeps its position. Changing it plans a replacement " +
					"that adopts the existing group, so the read position does not move.",
				Required:   true,
				Validators: []validator.String{stringvalidator.OneOf(valkey.Starts...)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(
					requiresReplaceUnlessImported,
					"Changing group_start replaces the resource, except right after an import, when state has no group_start yet.",
					"Changing `group_start` replaces the resource, except right after an import, when state has no `group_start` yet.",
				)},
			},
			"adopted": schema.BoolAttribute{
				MarkdownDescription: "True when the group already existed when Terraform first ensured it (created elsewhere, or imported): " +
					"its `group_start` was not applied.",
				Computed:      true,
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

// requiresReplaceUnlessImported lets an import record the configured group_start in place.
func requiresReplaceUnlessImported(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = !req.StateValue.IsNull()
}

func (r *streamGroupResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *streamGroupResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan streamGroupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	stream, name, start := plan.Stream.ValueString(), plan.Name.ValueString(), plan.GroupStart.ValueString()
	if !requireClient(r.data, &resp.Diagnostics) {
		return
	}

	outcome, group, err := r.data.client.EnsureGroup(ctx, stream, name, valkey.Start(start))
	if err != nil {
		resp.Diagnostics.AddError("Consumer Group Not Created", errorDetail(err, groupSubject(stream, name)))
		return
	}
	tflog.Debug(ctx, "group door", map[string]any{"stream": stream, "group": name, "outcome": outcome.String()})
	if outcome == valkey.Adopted {
		resp.Diagnostics.AddWarning("Consumer Group Adopted",
			fmt.Sprintf("Group %q already existed on stream %q, so it was adopted as it is: the declared group_start %q was not applied, "+
				"and the group keeps reading after last-delivered-id %s. Use XGROUP SETID outside Terraform if it must move.",
				name, stream, start, group.LastDeliveredID))
	}
	plan.ID = types.StringValue(groupID(stream, name))
	plan.Adopted = types.BoolValue(outcome == valkey.Adopted)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *streamGroupResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	// Only stream and name are needed, and Read changes no attribute: the prior state stays
	// in resp.State as it is, so a refresh of many groups decodes and encodes nothing else.
	var stream, name types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("stream"), &stream)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() || !requireClient(r.data, &resp.Diagnostics) {
		return
	}
	_, found, err := r.data.client.Group(ctx, stream.ValueString(), name.ValueString())
	if err != nil {
		// Never drop state because the server could not answer: only "gone" removes it.
		resp.Diagnostics.AddError("Consumer Group Not Read", errorDetail(err, groupSubject(stream.ValueString(), name.ValueString())))
		return
	}
	if !found {
		tflog.Info(ctx, "group is gone from the server; removing it from state",
			map[string]any{"stream": stream.ValueString(), "group": name.ValueString()})
		resp.State.RemoveResource(ctx)
	}
}

// Update only happens right after an import, when the configured group_start is recorded.
func (r *streamGroupResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan streamGroupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

// Delete sends nothing to the server: the group and its entries stay.
func (r *streamGroupResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state streamGroupModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.AddWarning("Consumer Group Left On Server", leftOnServer(state))
}

func leftOnServer(state streamGroupModel) string {
	return fmt.Sprintf("Terraform forgets group %q of stream %q but sends nothing to the server: the group, its pending entries "+
		"and the stream stay. Remove them deliberately (XGROUP DESTROY, DEL) outside Terraform if nothing reads them.",
		state.Name.ValueString(), state.Stream.ValueString())
}

func (r *streamGroupResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	stream, name, ok := parseGroupID(req.ID)
	if !ok {
		resp.Diagnostics.AddError("Invalid Import ID", fmt.Sprintf("The import ID %q is not of the form <stream>/<name>, "+
			"for example \"emq:{orders}:stream:main/billing\". The ID is split at the last \"/\", so the stream key may "+
			"contain \"/\" but the group name may not.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, streamGroupModel{
		ID:         types.StringValue(groupID(stream, name)),
		Stream:     types.StringValue(stream),
		Name:       types.StringValue(name),
		GroupStart: types.StringNull(),
		Adopted:    types.BoolValue(true),
	})...)
}

func groupID(stream, name string) string { return stream + "/" + name }

// parseGroupID splits "<stream>/<name>" at the last "/": stream keys may hold "/", group
// names may not. Both parts must be non-empty.
func parseGroupID(id string) (stream, name string, ok bool) {
	i := strings.LastIndex(id, "/")
	if i <= 0 || i == len(id)-1 {
		return "", "", false
	}
	return id[:i], id[i+1:], true
}
