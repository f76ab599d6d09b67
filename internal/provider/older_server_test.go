package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestOlderServer_LagReadsAsUnknown: a server of Redis 6.2's protocol (Upstash documents its
// compatibility up to 6.2) sends XINFO GROUPS without entries-read and lag, and XINFO STREAM
// without entries-added and max-deleted-entry-id. Through a proxy that takes those fields out,
// the plan's adopt warning says the lag is unknown (never 0), valkey_stream_group reads lag and
// entries_read as null, and valkey_stream reads entries_added and max_deleted_entry_id as null,
// while what the server does report is read as before.
func TestOlderServer_LagReadsAsUnknown(t *testing.T) {
	t.Parallel()
	srv := acctest.Server(t)
	rdb, stream := acctest.Admin(t, srv), acctest.StreamKey(t)
	valkeytest.SeedGroupWithConsumers(t, rdb, stream) // billing: lag 2, entries-read 3 on Valkey
	fields := []string{"entries-read", "lag", "entries-added", "max-deleted-entry-id", "recorded-first-entry-id"}
	p := faultproxy.StartProxyT(t, srv.Addr(),
		faultproxy.Fault{Command: "XINFO GROUPS", Action: faultproxy.DropFields, Fields: fields},
		faultproxy.Fault{Command: "XINFO STREAM", Action: faultproxy.DropFields, Fields: fields})
	settings := map[string]string{"url": p.URL()}

	diags := newPlanPreview(t, settings).create(stream, "new")
	diagtest.ExpectWarning(t, diags, planwords.GroupSummary(stream, "billing", planwords.WillBeAdopted, planwords.LagFigure(planwords.LagUnknown)), 1,
		"at last-delivered-id 3-1 with lag unknown (the server cannot compute it)")

	group := readDataSource(t, settings, &streamGroupDataSource{}, map[string]tftypes.Value{
		"stream": tftypes.NewValue(tftypes.String, stream), "name": tftypes.NewValue(tftypes.String, "billing")})
	for attribute, want := range map[string]types.Int64{"lag": types.Int64Null(), "entries_read": types.Int64Null(), "pending": types.Int64Value(2)} {
		var got types.Int64
		if d := group.GetAttribute(t.Context(), path.Root(attribute), &got); d.HasError() || !got.Equal(want) {
			t.Errorf("valkey_stream_group.%s = %v (%v), want %v", attribute, got, d, want)
		}
	}

	s := readDataSource(t, settings, &streamDataSource{}, map[string]tftypes.Value{
		"key": tftypes.NewValue(tftypes.String, stream)})
	var added, length types.Int64
	var maxDeleted types.String
	s.GetAttribute(t.Context(), path.Root("entries_added"), &added)
	s.GetAttribute(t.Context(), path.Root("length"), &length)
	s.GetAttribute(t.Context(), path.Root("max_deleted_entry_id"), &maxDeleted)
	if !added.IsNull() || !maxDeleted.IsNull() || length.ValueInt64() != 5 {
		t.Errorf("valkey_stream: entries_added %v, max_deleted_entry_id %v, length %v; want null, null, 5", added, maxDeleted, length)
	}
}
