// Command terraform-provider-valkey serves the Valkey provider to Terraform and OpenTofu.
//
// It serves through internal/pluginserver, not providerserver.Serve: pluginserver quiets the
// SDK's trace logs unless they are asked for, and lets terraform-plugin-framework forget the
// requests that have ended, which it would otherwise keep until the process exits (see that
// package). The acceptance tests serve through the same package.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/echomq/terraform-provider-valkey/internal/pluginserver"
	"github.com/echomq/terraform-provider-valkey/internal/provider"
)

// version is set by goreleaser's ldflags.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers like delve")
	flag.Parse()

	err := pluginserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/echomq/valkey",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
