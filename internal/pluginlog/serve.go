package pluginlog

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// Serve is providerserver.Serve for protocol 6 with our logging decisions: the SDK's trace logs
// are quieted unless asked for (QuietUnlessWanted), and the per-request logger state the
// framework would keep until the process exits is released once its requests have ended
// (releasingServer). Each request still gets the framework's context and loggers untouched, so
// TF_LOG works as before. The provider binary, the bench floor and the profiling build all
// serve through it.
func Serve(_ context.Context, providerFunc func() provider.Provider, opts providerserver.ServeOpts) error {
	if opts.Address == "" {
		return fmt.Errorf("unable to validate ServeOpts: Address must be provided")
	}
	if opts.ProtocolVersion != 0 && opts.ProtocolVersion != 6 {
		return fmt.Errorf("unable to validate ServeOpts: pluginlog.Serve serves protocol 6 only, not %d", opts.ProtocolVersion)
	}
	QuietUnlessWanted()
	var serveOpts []tf6server.ServeOpt
	if opts.Debug {
		serveOpts = append(serveOpts, tf6server.WithManagedDebug())
	}
	return tf6server.Serve(opts.Address, func() tfprotov6.ProviderServer {
		return ReleaseEnded(providerserver.NewProtocol6(providerFunc())())
	}, serveOpts...)
}
