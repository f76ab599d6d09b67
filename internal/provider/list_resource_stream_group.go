package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

var (
	_ list.ListResource                   = (*streamGroupListResource)(nil)
	_ list.ListResourceWithConfigure      = (*streamGroupListResource)(nil)
	_ list.ListResourceWithValidateConfig = (*streamGroupListResource)(nil)
)

// NewStreamGroupListResource returns the list resource of valkey_stream_group: what
// `terraform query` uses to find the groups already on the server.
func NewStreamGroupListResource() list.ListResource { return &streamGroupListResource{} }

type streamGroupListResource struct {
	data *providerData
}

// streamGroupListModel is the list block's config.
type streamGroupListModel struct {
	Streams types.List   `tfsdk:"streams"`
	Match   types.String `tfsdk:"match"`
}

func (r *streamGroupListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_stream_group"
}

func (r *streamGroupListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Finds the consumer groups already on the server, for `terraform query` (Terraform 1.14 and later): " +
			"one result per group, named by its identity (`stream`, `name`). With `-generate-config-out`, Terraform writes an " +
			"import block and a `valkey_stream_group` resource for each, with `group_start = null` for you to declare. " +
			"Nothing is written to the server.",
		Attributes: map[string]schema.Attribute{
			"streams": schema.ListAttribute{
				MarkdownDescription: "Stream keys whose groups to list, as they are. A key that does not exist, or holds " +
					"another type, yields nothing.",
				ElementType: types.StringType,
				Optional:    true,
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1)),
				},
			},
			"match": schema.StringAttribute{
				MarkdownDescription: "A glob such as `emq:{orders}:*`: the groups of every stream whose key matches are listed " +
					"(`SCAN ... MATCH ... TYPE stream`, on every primary of a cluster). Keys of other types are skipped. " +
					"The ACL user needs `+scan`, and `+xinfo|groups` on the matched keys.",
				Optional:   true,
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
		},
	}
}

// ValidateListResourceConfig requires streams or match, at plan time and on the attribute.
func (r *streamGroupListResource) ValidateListResourceConfig(ctx context.Context, req list.ValidateConfigRequest, resp *list.ValidateConfigResponse) {
	var config streamGroupListModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || !config.Streams.IsNull() || !config.Match.IsNull() {
		return
	}
	resp.Diagnostics.AddAttributeError(path.Root("streams"), "Streams Or Match Required",
		"This list block would list nothing: set streams to the stream keys whose groups to list, or match to a glob "+
			"(such as \"emq:{orders}:*\") that their keys match, or both.")
}

func (r *streamGroupListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// List streams one result per group, as the server reports them page by page, and stops at
// Terraform's limit. The first error ends the stream.
func (r *streamGroupListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var config streamGroupListModel
	diags := req.Config.Get(ctx, &config)
	opts := valkey.ListOptions{Match: config.Match.ValueString()}
	diags.Append(config.Streams.ElementsAs(ctx, &opts.Streams, false)...)
	var client *valkey.Client
	if !diags.HasError() {
		client = r.data.clientFor(&diags, "Consumer Groups Not Listed", "the consumer groups to list")
	}
	if client == nil {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		var pushed int64
		for g, err := range client.ListGroups(ctx, opts) {
			if err != nil {
				subject := fmt.Sprintf("the streams matching %q", opts.Match)
				if g.Stream != "" {
					subject = "the consumer groups of " + streamSubject(g.Stream)
				}
				push(list.ListResult{Diagnostics: diag.Diagnostics{diag.NewErrorDiagnostic("Consumer Groups Not Listed", errorDetail(err, subject))}})
				return
			}
			if !push(listedResult(ctx, req, g.Stream, g.Name)) {
				return
			}
			if pushed++; req.Limit > 0 && pushed >= req.Limit {
				return
			}
		}
	}
}

// listedResult is one group as a result: its identity, a display name, and, when Terraform
// asks for it, the state an import of the group writes.
func listedResult(ctx context.Context, req list.ListRequest, stream, name string) list.ListResult {
	result := req.NewListResult(ctx)
	result.DisplayName = groupSubject(stream, name)
	result.Diagnostics.Append(result.Identity.Set(ctx, identityOf(stream, name))...)
	if req.IncludeResource {
		result.Diagnostics.Append(result.Resource.Set(ctx, importedGroup(stream, name))...)
	}
	return result
}
