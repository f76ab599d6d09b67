package systemtest

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/pluginserver"
	"github.com/echomq/terraform-provider-valkey/internal/provider"
)

// What the system tests share beyond internal/acctest (the one server, configuration for the
// real CLI, and checks on the server): the provider as terraform-plugin-testing serves it. The
// tests see the provider as its users do, through Terraform (or OpenTofu) and the server.

func TestMain(m *testing.M) { acctest.Main(m, cliCleanup) }

var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"valkey": pluginserver.NewProtocol6WithError(provider.New("test")()),
}
