package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// BenchmarkStreamGroupRead is one refresh of a group whose stream answer is already cached in
// the provider process (every refresh but the first on a stream), next to the framework's
// share of it: decoding the state into the model and encoding it back.
func BenchmarkStreamGroupRead(b *testing.B) {
	ctx := context.Background()
	client, err := valkey.NewClient(valkey.Options{URL: acctest.Server(b).URL()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close() })
	stream := acctest.StreamKey(b)
	if _, _, err := client.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil {
		b.Fatal(err)
	}
	r := &streamGroupResource{data: &providerData{client: client, plan: &planSession{}}}
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	raw := tftypes.NewValue(sr.Schema.Type().TerraformType(ctx), map[string]tftypes.Value{
		"id":          tftypes.NewValue(tftypes.String, groupID(stream, "billing")),
		"stream":      tftypes.NewValue(tftypes.String, stream),
		"name":        tftypes.NewValue(tftypes.String, "billing"),
		"group_start": tftypes.NewValue(tftypes.String, "new"),
		"adopted":     tftypes.NewValue(tftypes.Bool, false),
	})
	state := tfsdk.State{Schema: sr.Schema, Raw: raw}
	// Read sets the identity when the prior state has none, as states written before 1.12 have.
	var ir resource.IdentitySchemaResponse
	r.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &ir)
	noIdentity := func() *tfsdk.ResourceIdentity {
		return &tfsdk.ResourceIdentity{Schema: ir.IdentitySchema, Raw: tftypes.NewValue(ir.IdentitySchema.Type().TerraformType(ctx), nil)}
	}

	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp := resource.ReadResponse{State: state, Identity: noIdentity()}
			r.Read(ctx, resource.ReadRequest{State: state, Identity: noIdentity()}, &resp)
			if resp.Diagnostics.HasError() || resp.State.Raw.IsNull() {
				b.Fatalf("Read: %v", resp.Diagnostics)
			}
		}
	})
	b.Run("state_get_set", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m streamGroupModel
			resp := resource.ReadResponse{State: state}
			if d := state.Get(ctx, &m); d.HasError() {
				b.Fatal(d)
			}
			if d := resp.State.Set(ctx, m); d.HasError() {
				b.Fatal(d)
			}
		}
	})
	b.Run("get_two_attributes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var s, n types.String
			if d := state.GetAttribute(ctx, path.Root("stream"), &s); d.HasError() {
				b.Fatal(d)
			}
			if d := state.GetAttribute(ctx, path.Root("name"), &n); d.HasError() {
				b.Fatal(d)
			}
			if _, found, err := client.Group(ctx, s.ValueString(), n.ValueString()); err != nil || !found {
				b.Fatalf("Group: %v %v", found, err)
			}
		}
	})
}
