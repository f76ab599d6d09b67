// Command terraform-provider-valkey serves the Valkey provider to Terraform and OpenTofu.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/echomq/terraform-provider-valkey/internal/pluginlog"
	"github.com/echomq/terraform-provider-valkey/internal/provider"
)

// version is set by goreleaser's ldflags.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers like delve")
	flag.Parse()

	err := pluginlog.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/echomq/valkey",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
