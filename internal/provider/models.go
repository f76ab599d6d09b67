package provider

import (
	"errors"
	"fmt"

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

// clientFrom is the provider's client for a resource's or data source's Configure. Nil provider data (before
// the provider is configured) yields nil quietly.
func clientFrom(providerData any, diags *diag.Diagnostics) *valkey.Client {
	if providerData == nil {
		return nil
	}
	client, ok := providerData.(*valkey.Client)
	if !ok {
		diags.AddError("Unexpected Provider Data",
			fmt.Sprintf("Expected *valkey.Client, got %T. This is a bug in the provider; please report it.", providerData))
	}
	return client
}

// requireClient reports a missing client (the provider was never configured) as an error
// instead of a crash.
func requireClient(client *valkey.Client, diags *diag.Diagnostics) bool {
	if client == nil {
		diags.AddError("Provider Not Configured",
			"The valkey provider has no connection settings for this operation. This is a bug in the provider or in "+
				"the test harness running it; please report it with the configuration used.")
		return false
	}
	return true
}

// addReadError appends a data source's failed read of stream (and group, when not empty).
// A missing stream or group gets its own summary and says what to check; a key of another type
// names that type; everything else reads as the resource's errors do.
func addReadError(diags *diag.Diagnostics, err error, addr, stream, group string) {
	var (
		notFound    *valkey.NotFoundError
		wrongType   *valkey.WrongTypeError
		refused     *valkey.RefusedError
		unreachable *valkey.UnreachableError
	)
	thing := "Stream"
	if group != "" {
		thing = "Consumer Group"
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
	case errors.As(err, &wrongType):
		diags.AddError(thing+" Not Read", fmt.Sprintf("Key %q holds a %s, not a stream, so it has no stream information "+
			"or consumer groups to read. Point the data source at a stream key.", wrongType.Key, wrongType.Type))
	case group != "":
		diags.AddError(thing+" Not Read", valkeyErrorDetail(err, stream, group))
	case errors.As(err, &refused):
		diags.AddError(thing+" Not Read", fmt.Sprintf("The server at %s refused %s on key %q with: %s\n\n%s",
			refused.Addr, refused.Command, refused.Key, refused.Reply, refused.Hint()))
	case errors.As(err, &unreachable):
		diags.AddError(thing+" Not Read", fmt.Sprintf("Could not talk to Valkey at %s while reading stream %q: %v.\n\n%s",
			unreachable.Addr, stream, unreachable.Err, unreachable.Hint()))
	default:
		diags.AddError(thing+" Not Read", fmt.Sprintf("Stream %q could not be read: %v.", stream, err))
	}
}
