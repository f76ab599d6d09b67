package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// groupInfoModel is what the server reports about one consumer group, as Terraform values.
type groupInfoModel struct {
	Consumers       types.Int64  `tfsdk:"consumers"`
	Pending         types.Int64  `tfsdk:"pending"`
	LastDeliveredID types.String `tfsdk:"last_delivered_id"`
	EntriesRead     types.Int64  `tfsdk:"entries_read"`
	Lag             types.Int64  `tfsdk:"lag"`
}

// groupInfo turns a group read from the server into Terraform values; the server's nils stay null.
func groupInfo(g valkey.Group) groupInfoModel {
	return groupInfoModel{
		Consumers:       types.Int64Value(g.Consumers),
		Pending:         types.Int64Value(g.Pending),
		LastDeliveredID: types.StringValue(g.LastDeliveredID),
		EntriesRead:     types.Int64PointerValue(g.EntriesRead),
		Lag:             types.Int64PointerValue(g.Lag),
	}
}

// groupInfoAttributes is the schema of groupInfoModel, for every data source that reports a group.
func groupInfoAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"consumers": schema.Int64Attribute{
			MarkdownDescription: "How many consumers the group has.",
			Computed:            true,
		},
		"pending": schema.Int64Attribute{
			MarkdownDescription: "Entries delivered to the group's consumers and not yet acknowledged (the pending entries list).",
			Computed:            true,
		},
		"last_delivered_id": schema.StringAttribute{
			MarkdownDescription: "ID of the last entry delivered to the group (`last-delivered-id`); `0-0` when nothing was delivered yet.",
			Computed:            true,
		},
		"entries_read": schema.Int64Attribute{
			MarkdownDescription: "Logical read counter of the group (`entries-read`). Null when the server reports none.",
			Computed:            true,
		},
		"lag": schema.Int64Attribute{
			MarkdownDescription: "Entries in the stream not yet delivered to the group. Null when the server cannot compute it, " +
				"for example after entries inside the group's unread range were deleted: wrap it in `coalesce()` in conditions.",
			Computed: true,
		},
	}
}

// dataSourceBase gives every data source the provider's data through Configure.
type dataSourceBase struct {
	data *providerData
}

func (d *dataSourceBase) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// addReadError appends a data source's failed read of stream (and group, when not empty). A
// missing stream or group gets its own summary and says what to check; everything else is
// explained by errorDetail.
func addReadError(diags *diag.Diagnostics, err error, addr, stream, group string) {
	var notFound *valkey.NotFoundError
	thing, subject := "Stream", streamSubject(stream)
	if group != "" {
		thing, subject = "Consumer Group", groupSubject(stream, group)
	}
	switch {
	case errors.As(err, &notFound) && notFound.Group != "":
		diags.AddError("Consumer Group Not Found", fmt.Sprintf("Stream %q on the server at %s has no consumer group %q. "+
			"Check the group name, or declare the group with a valkey_stream_group resource and refer to its attributes "+
			"so that the data source is read after it.", notFound.Stream, addr, notFound.Group))
	case errors.As(err, &notFound):
		detail := fmt.Sprintf("Stream %q does not exist on the server at %s.", notFound.Stream, addr)
		if group != "" {
			detail = fmt.Sprintf("Stream %q does not exist on the server at %s, so it has no consumer group %q.",
				notFound.Stream, addr, group)
		}
		diags.AddError(thing+" Not Found", detail+" Check the key's spelling and the database in the provider's url, "+
			"or create the stream first (a valkey_stream_group resource creates it with its group).")
	default:
		diags.AddError(thing+" Not Read", errorDetail(err, subject))
	}
}
