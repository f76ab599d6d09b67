// Package pluginserver serves the provider as a Terraform plugin: it is what stands between
// terraform-plugin-go's gRPC server and terraform-plugin-framework's protocol 6 server. It
// quiets the SDK's trace logs unless they are asked for (QuietUnlessWanted), and it lets the
// framework forget the requests that have ended (releasingServer), which the framework would
// otherwise keep until the process exits.
//
// The provider binary (main.go), the acceptance tests' provider factories and the bench's
// floor and profiling builds all serve through it, so the suite tests what ships and the
// floor pays what we pay.
//
// Why a tfprotov6.ProviderServer wrapper and not one gRPC interceptor: an interceptor would see
// every RPC, present and future, with no pass-through methods, but there is nowhere to put it
// that the acceptance tests also pass through.
//
//   - tf6server.Serve (terraform-plugin-go v0.31.0) builds go-plugin's ServeConfig itself, and
//     its GRPCServer factory adds only the message size limits to grpc.NewServer. No
//     tf6server.ServeOpt reaches the gRPC server (they set debug, logging and the go-plugin
//     logger), and providerserver.ServeOpts has only Address, Debug and ProtocolVersion.
//   - The binary could still have one by calling go-plugin's plugin.Serve itself with
//     tf6server.GRPCProviderPlugin, copying tf6server.Serve's handshake and debug handling. The
//     acceptance tests could not: terraform-plugin-testing serves each ProtoV6ProviderFactories
//     entry through terraform-plugin-sdk's plugin.DebugServe, which calls tf6server.Serve
//     (terraform-plugin-testing v1.16.0, helper/resource's runProviderCommand). A factory hands
//     over a tfprotov6.ProviderServer and nothing else.
//
// So the one layer that the binary and the suite share is tfprotov6.ProviderServer, and Go
// wraps an interface method by method: releasingServer passes each RPC on in one line, and
// TestReleaseEnded_OffersEveryFrameworkRPC fails when a framework upgrade adds one it lacks.
package pluginserver

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// Serve is providerserver.Serve for protocol 6 with our two decisions: the SDK's trace logs are
// quieted unless asked for, and each server is NewProtocol6's. Each request still gets the
// framework's context and loggers untouched, so TF_LOG works as before.
func Serve(_ context.Context, providerFunc func() provider.Provider, opts providerserver.ServeOpts) error {
	if opts.Address == "" {
		return fmt.Errorf("unable to validate ServeOpts: Address must be provided")
	}
	if opts.ProtocolVersion != 0 && opts.ProtocolVersion != 6 {
		return fmt.Errorf("unable to validate ServeOpts: pluginserver.Serve serves protocol 6 only, not %d", opts.ProtocolVersion)
	}
	QuietUnlessWanted()
	var serveOpts []tf6server.ServeOpt
	if opts.Debug {
		serveOpts = append(serveOpts, tf6server.WithManagedDebug())
	}
	return tf6server.Serve(opts.Address, func() tfprotov6.ProviderServer {
		return NewProtocol6(providerFunc())()
	}, serveOpts...)
}

// NewProtocol6 is providerserver.NewProtocol6 with the framework's server wrapped by
// ReleaseEnded.
func NewProtocol6(p provider.Provider) func() tfprotov6.ProviderServer {
	framework := providerserver.NewProtocol6(p)
	return func() tfprotov6.ProviderServer { return ReleaseEnded(framework()) }
}

// NewProtocol6WithError is NewProtocol6 in the shape of terraform-plugin-testing's
// ProtoV6ProviderFactories, as providerserver.NewProtocol6WithError is.
func NewProtocol6WithError(p provider.Provider) func() (tfprotov6.ProviderServer, error) {
	server := NewProtocol6(p)
	return func() (tfprotov6.ProviderServer, error) { return server(), nil }
}
