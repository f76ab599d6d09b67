package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

var (
	_ resource.Resource                = (*streamGroupResource)(nil)
	_ resource.ResourceWithConfigure   = (*streamGroupResource)(nil)
	_ resource.ResourceWithImportState = (*streamGroupResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*streamGroupResource)(nil)
	_ resource.ResourceWithIdentity    = (*streamGroupResource)(nil)
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

// streamGroupIdentity names a group without any string to parse: what an import block's
// identity holds (Terraform 1.12+, OpenTofu 1.12+).
type streamGroupIdentity struct {
	Stream types.String `tfsdk:"stream"`
	Name   types.String `tfsdk:"name"`
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
				MarkdownDescription: "The import ID: `<stream>/<name>`, with `%` and `/` in the name written `%25` and `%2F`. " +
					"Known at plan time.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{plannedID{}},
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
					"or `head` (sends `0`: replay every entry already in the stream). Required, with no default: the start is " +
					"declared, never guessed. It applies only when `XGROUP CREATE` creates the group; an adopted group keeps its " +
					"position. Changing it from one value to another plans a replacement that adopts the existing group, so the " +
					"read position does not move. Declaring it for an imported group (which has none in state) records it in place.",
				Required:   true,
				Validators: []validator.String{startDeclared{}, stringvalidator.OneOf(valkey.Starts...)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(
					requiresReplaceIfStartChanges,
					"Changing group_start from one declared value to another replaces the resource; declaring it for a group "+
						"imported without one does not.",
					"Changing `group_start` from one declared value to another replaces the resource; declaring it for a group "+
						"imported without one does not.",
				)},
			},
			"adopted": schema.BoolAttribute{
				MarkdownDescription: "True when the group already existed when Terraform first ensured it (`XGROUP CREATE` answered " +
					"`BUSYGROUP`: created by another client or by an earlier apply whose reply was lost, or imported): it was kept " +
					"as the server had it, so its position is the one its creator chose, which need not be `group_start`.",
				Computed:      true,
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

// requiresReplaceIfStartChanges replaces only when one declared start becomes another: an
// import, which leaves group_start null in state, records the declared one in place.
func requiresReplaceIfStartChanges(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = !req.StateValue.IsNull() && !req.PlanValue.IsNull()
}

func (r *streamGroupResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"stream": identityschema.StringAttribute{
				Description:       "Stream key, as it is.",
				RequiredForImport: true,
			},
			"name": identityschema.StringAttribute{
				Description:       "Consumer group name, as it is (no escaping).",
				RequiredForImport: true,
			},
		},
	}
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
	client := r.data.clientFor(&resp.Diagnostics, "Consumer Group Not Created", groupSubject(stream, name))
	if client == nil {
		return
	}

	outcome, group, err := client.EnsureGroup(ctx, stream, name, valkey.Start(start))
	if err != nil {
		resp.Diagnostics.AddError(ensureErrorSummary(err), errorDetail(err, groupSubject(stream, name)))
		return
	}
	tflog.Debug(ctx, "XGROUP CREATE", map[string]any{"stream": stream, "group": name, "outcome": outcome.String()})
	if outcome == valkey.Adopted {
		warnOnResource(&resp.Diagnostics, planwords.GroupSummary(stream, name, planwords.AdoptedNotCreated, ""), adoptedDetail(stream, name, start, group))
	}
	plan.ID = types.StringValue(groupID(stream, name))
	plan.Adopted = types.BoolValue(outcome == valkey.Adopted)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	resp.Diagnostics.Append(resp.Identity.Set(ctx, streamGroupIdentity{Stream: plan.Stream, Name: plan.Name})...)
}

func (r *streamGroupResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	// Only stream and name are needed. The prior state stays in resp.State as it is, so a
	// refresh of many groups decodes and encodes nothing else; Read changes it only to rewrite
	// an id written before names were escaped, and removes it when the server says the group
	// or its stream is gone.
	var stream, name types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("stream"), &stream)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// The identity first, so that every way out of Read leaves it set: states written before
	// the resource had an identity get one on their first refresh.
	if req.Identity == nil || req.Identity.Raw.IsFullyNull() {
		resp.Diagnostics.Append(resp.Identity.Set(ctx, streamGroupIdentity{Stream: stream, Name: name})...)
	}
	// IDs written before names were escaped ("s/team/a" for group "team/a") are rewritten.
	if strings.ContainsAny(name.ValueString(), "%/") {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), groupID(stream.ValueString(), name.ValueString()))...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.data.clientFor(&resp.Diagnostics, "Consumer Group Not Read", groupSubject(stream.ValueString(), name.ValueString()))
	if client == nil {
		return
	}
	_, found, err := client.Group(ctx, stream.ValueString(), name.ValueString())
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

// Update records a group_start declared for a group imported without one; it sends nothing
// to the server. The identity is set too: OpenTofu expects it back
// from every Update.
func (r *streamGroupResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan streamGroupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	resp.Diagnostics.Append(resp.Identity.Set(ctx, streamGroupIdentity{Stream: plan.Stream, Name: plan.Name})...)
}

// Delete sends nothing to the server: the group and its entries stay.
func (r *streamGroupResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state streamGroupModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	warnOnResource(&resp.Diagnostics, planwords.GroupSummary(state.Stream.ValueString(), state.Name.ValueString(), planwords.LeftOnServer, ""), leftOnServerDetail(state))
}

// ImportState takes a group by its ID (`terraform import`, or an import block's id) or by its
// identity (an import block's identity). The group is recorded as adopted, without a
// group_start: the server does not know where it started.
func (r *streamGroupResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var stream, name string
	if req.ID != "" {
		var err error
		if stream, name, err = parseGroupID(req.ID); err != nil {
			resp.Diagnostics.AddError("Invalid Import ID", fmt.Sprintf("The import ID %q is not of the form <stream>/<name>: %s. "+
				"An ID is the stream key, \"/\", and the group name, for example \"emq:{orders}:stream:main/billing\"; in the name, "+
				"\"%%\" is written \"%%25\" and \"/\" is written \"%%2F\" (the id attribute in state is already written so). "+
				"An import block can name the group without an ID: identity = { stream = \"...\", name = \"...\" }.", req.ID, err))
			return
		}
	} else {
		var identity streamGroupIdentity
		resp.Diagnostics.Append(req.Identity.Get(ctx, &identity)...)
		if resp.Diagnostics.HasError() {
			return
		}
		stream, name = identity.Stream.ValueString(), identity.Name.ValueString()
		if stream == "" || name == "" {
			resp.Diagnostics.AddError("Invalid Import Identity",
				fmt.Sprintf("The import identity names stream %q and group %q; both must be non-empty. Write the import block's "+
					"identity as { stream = \"<stream key>\", name = \"<group name>\" }, with both values as they are on the server.", stream, name))
			return
		}
	}
	client := r.data.clientFor(&resp.Diagnostics, "Consumer Group Not Imported", groupSubject(stream, name))
	if client == nil {
		return
	}
	// Look the group up now, so that an ID that names no group says which stream and group were
	// looked up (Terraform's own message names neither).
	_, found, err := client.Group(ctx, stream, name)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Consumer Group Not Imported", errorDetail(err, groupSubject(stream, name)))
		return
	case !found:
		resp.Diagnostics.AddError("Consumer Group Not Found For Import", r.notFoundForImport(ctx, req.ID, stream, name))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, importedGroup(stream, name))...)
	resp.Diagnostics.Append(resp.Identity.Set(ctx, identityOf(stream, name))...)
}

// importedGroup is the state of a group taken under management as it is (an import, or a
// result of the list resource): adopted, with no group_start, which the server does not know.
func importedGroup(stream, name string) streamGroupModel {
	return streamGroupModel{
		ID:         types.StringValue(groupID(stream, name)),
		Stream:     types.StringValue(stream),
		Name:       types.StringValue(name),
		GroupStart: types.StringNull(),
		Adopted:    types.BoolValue(true),
	}
}

func identityOf(stream, name string) streamGroupIdentity {
	return streamGroupIdentity{Stream: types.StringValue(stream), Name: types.StringValue(name)}
}
