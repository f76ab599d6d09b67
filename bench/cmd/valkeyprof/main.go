// Command valkeyprof is the Valkey provider exactly as main.go serves it (pluginserver.Serve),
// plus an optional CPU profile ($BENCH_CPUPROFILE_DIR). `make bench -pprof` runs it in place
// of the real binary for one extra, untimed pass.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/echomq/terraform-provider-valkey/bench/internal/cpuprofile"
	"github.com/echomq/terraform-provider-valkey/internal/pluginserver"
	"github.com/echomq/terraform-provider-valkey/internal/provider"
)

func main() {
	stop := cpuprofile.Start("valkey")
	err := pluginserver.Serve(context.Background(), provider.New("bench"), providerserver.ServeOpts{
		Address: "registry.terraform.io/echomq/valkey",
	})
	stop()
	if err != nil {
		log.Fatal(err.Error())
	}
}
