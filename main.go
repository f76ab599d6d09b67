// Command terraform-provider-valkey serves the Valkey provider to Terraform and OpenTofu.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/echomq/terraform-provider-valkey/internal/provider"
)

// version is set by goreleaser's ldflags.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers like delve")
	flag.Parse()
	quietSDKLogsUnlessWanted()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/echomq/valkey",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}

// quietSDKLogsUnlessWanted turns the plugin SDK's TRACE logging off when Terraform was not
// asked for logs and so would parse and drop every line: that logging is a third of the
// plugin's CPU in a large plan. Any TF_LOG* variable keeps the SDK's own behaviour.
func quietSDKLogsUnlessWanted() {
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PATH", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_ACC"} {
		if os.Getenv(v) != "" {
			return
		}
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER"} {
		_ = os.Setenv(v, "OFF")
	}
}
