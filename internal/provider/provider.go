// Package provider holds the Terraform side of the Valkey provider: schema, plan, state and
// diagnostics. Every Valkey command lives in internal/valkey.
package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

var _ provider.Provider = (*valkeyProvider)(nil)
var _ provider.ProviderWithFunctions = (*valkeyProvider)(nil)
var _ provider.ProviderWithListResources = (*valkeyProvider)(nil)

type valkeyProvider struct {
	version string
}

// New returns a constructor for the provider, as providerserver expects.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &valkeyProvider{version: version} }
}

func (p *valkeyProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "valkey"
	resp.Version = p.version
}

func (p *valkeyProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Declares Valkey stream consumer groups the safe way: create or adopt, never destroy. " +
			"Connects to one server (`url`), a cluster (`cluster`) or a primary found through Sentinel (`sentinel`), " +
			"with TLS (`tls`, or a `valkeys://` url) and ACL users. Nothing is dialled until a command needs the server.",
		Attributes: settingAttributes(""),
	}
}

func (p *valkeyProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var config types.Object
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resolved, diags := resolveSettings(config, os.Getenv)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	data := &providerData{plan: &planSession{}}
	if len(resolved.unknown) > 0 {
		// A plan with a configuration that depends on values known only after apply: no client is
		// made, and every operation that needs the server says why it could not ask it.
		tflog.Debug(ctx, "provider configuration unknown; no client is made", map[string]any{"unknown": resolved.unknown})
		data.unknown = &configUnknownError{settings: resolved.unknown}
	} else {
		client, err := valkey.NewClient(resolved.options)
		if err != nil {
			addSettingsError(&resp.Diagnostics, err, resolved.urlSource)
			return
		}
		data.client = client
	}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.ListResourceData = data
}

func (p *valkeyProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewStreamGroupResource}
}

func (p *valkeyProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewStreamDataSource, NewStreamGroupDataSource}
}

func (p *valkeyProvider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{NewStreamGroupListResource}
}

func (p *valkeyProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{NewHashSlotFunction}
}
