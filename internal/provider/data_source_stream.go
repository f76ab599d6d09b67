package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ datasource.DataSource              = (*streamDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*streamDataSource)(nil)
)

// NewStreamDataSource returns the valkey_stream data source.
func NewStreamDataSource() datasource.DataSource { return &streamDataSource{} }

type streamDataSource struct{ dataSourceBase }

type streamDataModel struct {
	Key               types.String `tfsdk:"key"`
	Length            types.Int64  `tfsdk:"length"`
	FirstEntryID      types.String `tfsdk:"first_entry_id"`
	LastEntryID       types.String `tfsdk:"last_entry_id"`
	LastGeneratedID   types.String `tfsdk:"last_generated_id"`
	EntriesAdded      types.Int64  `tfsdk:"entries_added"`
	MaxDeletedEntryID types.String `tfsdk:"max_deleted_entry_id"`
	Groups            []string     `tfsdk:"groups"`
}

func (d *streamDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_stream"
}

func (d *streamDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a stream as the server reports it (`XINFO STREAM`, with the names from `XINFO GROUPS`, " +
			"one round trip), without managing it. A missing key, or a key of another type, is an error.",
		Attributes: map[string]schema.Attribute{
			"key": schema.StringAttribute{
				MarkdownDescription: "Stream key, for example `emq:{orders}:stream:main`.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"length": schema.Int64Attribute{
				MarkdownDescription: "Entries in the stream now (`XLEN`).",
				Computed:            true,
			},
			"first_entry_id": schema.StringAttribute{
				MarkdownDescription: "ID of the oldest entry still in the stream; null when the stream is empty.",
				Computed:            true,
			},
			"last_entry_id": schema.StringAttribute{
				MarkdownDescription: "ID of the newest entry still in the stream; null when the stream is empty.",
				Computed:            true,
			},
			"last_generated_id": schema.StringAttribute{
				MarkdownDescription: "The highest ID ever added (`last-generated-id`), even if that entry was deleted since; `0-0` for a stream that never had an entry.",
				Computed:            true,
			},
			"entries_added": schema.Int64Attribute{
				MarkdownDescription: "How many entries were ever added to the stream (`entries-added`), deleted ones included; null when the " +
					"server does not report it (Redis before 7.0, and servers of its protocol such as Upstash).",
				Computed: true,
			},
			"max_deleted_entry_id": schema.StringAttribute{
				MarkdownDescription: "The highest ID ever deleted from the stream (`max-deleted-entry-id`); `0-0` when none was; null when " +
					"the server does not report it (Redis before 7.0, and servers of its protocol such as Upstash).",
				Computed: true,
			},
			"groups": schema.ListAttribute{
				MarkdownDescription: "Names of the stream's consumer groups, in the order `XINFO GROUPS` lists them.",
				ElementType:         types.StringType,
				Computed:            true,
			},
		},
	}
}

func (d *streamDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config streamDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	key := config.Key.ValueString()
	client := d.data.clientFor(&resp.Diagnostics, "Stream Not Read", streamSubject(key))
	if client == nil {
		return
	}
	stream, err := client.StreamInfo(ctx, key)
	if err != nil {
		addReadError(&resp.Diagnostics, err, client.Addr(), key, "")
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, streamDataModel{
		Key:               config.Key,
		Length:            types.Int64Value(stream.Length),
		FirstEntryID:      types.StringPointerValue(stream.FirstEntryID),
		LastEntryID:       types.StringPointerValue(stream.LastEntryID),
		LastGeneratedID:   types.StringValue(stream.LastGeneratedID),
		EntriesAdded:      types.Int64PointerValue(stream.EntriesAdded),
		MaxDeletedEntryID: types.StringPointerValue(stream.MaxDeletedEntryID),
		Groups:            stream.Groups,
	})...)
}
