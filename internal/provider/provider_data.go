package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// providerData is what Configure hands to every resource and data source: the one client of
// this provider instance, or why there is none yet, and what plan-time checks remember during
// one Terraform command.
type providerData struct {
	client  *valkey.Client      // nil while the configuration is not known yet
	unknown *configUnknownError // why client is nil
	plan    *planSession
}

// configUnknownError is why there is no client: the provider's configuration depends on values
// known only after apply (a url taken from a resource not created yet), so Terraform configured
// the provider with unknown values, and no server can be asked anything until they are known.
// It is a Terraform idea, so internal/valkey never sees it: no client is made.
type configUnknownError struct {
	settings []string // the settings not known yet, such as "url" or "tls.ca_cert"
}

func (e *configUnknownError) Error() string {
	return fmt.Sprintf("the connection settings were not known yet (%s), so no server can be contacted",
		strings.Join(e.settings, ", "))
}

// dataFrom is the provider's data for a resource's or data source's Configure. Nil provider
// data (before the provider is configured) yields nil quietly.
func dataFrom(raw any, diags *diag.Diagnostics) *providerData {
	if raw == nil {
		return nil
	}
	data, ok := raw.(*providerData)
	if !ok {
		diags.AddError("Unexpected Provider Data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", raw))
	}
	return data
}

// clientFor is the client for an operation on subject (such as `group "g" of stream "s"`).
// Without one it reports why and returns nil: a configuration not known yet under summary, as
// the operation reports its own failures, and a provider never configured as a bug.
func (d *providerData) clientFor(diags *diag.Diagnostics, summary, subject string) *valkey.Client {
	switch {
	case d != nil && d.client != nil:
		return d.client
	case d != nil && d.unknown != nil:
		diags.AddError(summary, errorDetail(d.unknown, subject))
	default:
		diags.AddError("Provider Not Configured",
			"The valkey provider has no connection settings for this operation. This is a bug in the provider or in "+
				"the test harness running it; please report it with the configuration used.")
	}
	return nil
}

// survey is the plan session's survey of stream. While the configuration is not known yet it
// asks nothing and returns that, with first true for the first call only, as the plan
// session does for a server it could not reach: the plan says it once.
func (d *providerData) survey(ctx context.Context, stream string) (survey valkey.Survey, first bool, err error) {
	if d.unknown != nil {
		return valkey.Survey{}, d.plan.once("configuration unknown"), d.unknown
	}
	return d.plan.survey(ctx, d.client, stream)
}
