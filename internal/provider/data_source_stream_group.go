package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ datasource.DataSource              = (*streamGroupDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*streamGroupDataSource)(nil)
)

// NewStreamGroupDataSource returns the valkey_stream_group data source.
func NewStreamGroupDataSource() datasource.DataSource { return &streamGroupDataSource{} }

type streamGroupDataSource struct{ dataSourceBase }

type streamGroupDataModel struct {
	Stream types.String `tfsdk:"stream"`
	Name   types.String `tfsdk:"name"`
	groupInfoModel
	Consumer []consumerModel `tfsdk:"consumer"`
}

type consumerModel struct {
	Name    types.String `tfsdk:"name"`
	Pending types.Int64  `tfsdk:"pending"`
	IdleMs  types.Int64  `tfsdk:"idle_ms"`
}

func (d *streamGroupDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_stream_group"
}

func (d *streamGroupDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attributes := map[string]schema.Attribute{
		"stream": schema.StringAttribute{
			MarkdownDescription: "Stream key the group lives on, for example `emq:{orders}:stream:main`.",
			Required:            true,
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"name": schema.StringAttribute{
			MarkdownDescription: "Consumer group name.",
			Required:            true,
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"consumer": schema.ListNestedAttribute{
			MarkdownDescription: "The group's consumers in the order `XINFO CONSUMERS` lists them.",
			Computed:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name": schema.StringAttribute{
					MarkdownDescription: "Consumer name.",
					Computed:            true,
				},
				"pending": schema.Int64Attribute{
					MarkdownDescription: "Entries delivered to this consumer and not yet acknowledged.",
					Computed:            true,
				},
				"idle_ms": schema.Int64Attribute{
					MarkdownDescription: "Milliseconds since the consumer last attempted an interaction (`idle`), at the time of the read.",
					Computed:            true,
				},
			}},
		},
	}
	maps.Copy(attributes, groupInfoAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads one consumer group of a stream and its consumers as the server reports them " +
			"(`XINFO GROUPS` and `XINFO CONSUMERS`, one round trip), without managing it. A missing stream or group is an error.",
		Attributes: attributes,
	}
}

func (d *streamGroupDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config streamGroupDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	stream, name := config.Stream.ValueString(), config.Name.ValueString()
	client := d.data.clientFor(&resp.Diagnostics, "Consumer Group Not Read", groupSubject(stream, name))
	if client == nil {
		return
	}
	group, consumers, err := client.GroupDetail(ctx, stream, name)
	if err != nil {
		addReadError(&resp.Diagnostics, err, client.Addr(), stream, name)
		return
	}
	config.groupInfoModel = groupInfo(group)
	config.Consumer = make([]consumerModel, 0, len(consumers))
	for _, c := range consumers {
		config.Consumer = append(config.Consumer, consumerModel{
			Name:    types.StringValue(c.Name),
			Pending: types.Int64Value(c.Pending),
			IdleMs:  types.Int64Value(c.IdleMs),
		})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, config)...)
}
