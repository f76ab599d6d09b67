// Package provider holds the Terraform side of the Valkey provider: schema, plan, state and
// diagnostics. Every Valkey command lives in internal/valkey.
package provider

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

var _ provider.Provider = (*valkeyProvider)(nil)

// Environment variables read when an attribute is not set.
const (
	envURL      = "VALKEY_URL"
	envUsername = "VALKEY_USERNAME"
	envPassword = "VALKEY_PASSWORD"
)

type valkeyProvider struct {
	version string
}

type providerModel struct {
	URL      types.String `tfsdk:"url"`
	Username types.String `tfsdk:"username"`
	Password types.String `tfsdk:"password"`
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
		MarkdownDescription: "Declares Valkey stream consumer groups the safe way: create or adopt, never destroy.",
		Attributes: map[string]schema.Attribute{
			"url": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("Server URL: `%s`. The `valkeys://` and `rediss://` forms turn TLS on "+
					"with the system's root certificates. Defaults to `$%s`, then `%s`.",
					valkey.AcceptedURLForms, envURL, valkey.DefaultURL),
				Optional:   true,
				Validators: []validator.String{urlValidator{}},
			},
			"username": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("ACL user name; overrides the URL's user. Defaults to `$%s`.", envUsername),
				Optional:            true,
			},
			"password": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("Password; overrides the URL's password. Defaults to `$%s`.", envPassword),
				Optional:            true,
				Sensitive:           true,
			},
		},
	}
}

func (p *valkeyProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var config providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	opts, attr := optionsFrom(config, os.Getenv)
	client, err := valkey.NewClient(opts)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("url"), "Invalid Valkey URL",
			fmt.Sprintf("The URL taken from %s cannot be used: %s.", attr, err))
		return
	}
	resp.ResourceData = client
	resp.DataSourceData = client
}

// optionsFrom resolves each setting: attribute, then environment variable, then default. It
// also says where the URL came from, for messages.
func optionsFrom(config providerModel, getenv func(string) string) (valkey.Options, string) {
	pick := func(attr types.String, env string) string {
		if !attr.IsNull() && !attr.IsUnknown() {
			return attr.ValueString()
		}
		return getenv(env)
	}
	opts := valkey.Options{
		URL:      pick(config.URL, envURL),
		Username: pick(config.Username, envUsername),
		Password: pick(config.Password, envPassword),
	}
	source := "the url attribute"
	switch {
	case config.URL.IsNull() && opts.URL != "":
		source = "the " + envURL + " environment variable"
	case opts.URL == "":
		opts.URL = valkey.DefaultURL
		source = "the default"
	}
	return opts, source
}

func (p *valkeyProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewStreamGroupResource}
}

func (p *valkeyProvider) DataSources(context.Context) []func() datasource.DataSource {
	return nil
}

func (p *valkeyProvider) Functions(context.Context) []func() function.Function {
	return nil
}

// urlValidator rejects a malformed url at plan time, naming the accepted forms.
type urlValidator struct{}

func (urlValidator) Description(context.Context) string {
	return "must be a URL of the form " + valkey.AcceptedURLForms
}

func (v urlValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (urlValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := valkey.ParseURL(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Valkey URL", "The url cannot be used: "+err.Error()+".")
	}
}
