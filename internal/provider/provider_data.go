package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// providerData is what Configure hands to every resource and data source: the one client of
// this provider instance, and what plan-time checks remember during one Terraform command.
type providerData struct {
	client *valkey.Client
	plan   *planSession
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

// requireClient reports a missing client (the provider was never configured) as an error
// instead of a crash.
func requireClient(data *providerData, diags *diag.Diagnostics) bool {
	if data == nil || data.client == nil {
		diags.AddError("Provider Not Configured",
			"The valkey provider has no connection settings for this operation. This is a bug in the provider or in "+
				"the test harness running it; please report it with the configuration used.")
		return false
	}
	return true
}
