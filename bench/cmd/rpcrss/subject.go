package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"runtime"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/echomq/terraform-provider-valkey/internal/pluginserver"
)

const address = "registry.terraform.io/echomq/rpcrss"

// serveSubject serves one subject until the client kills it.
func serveSubject(subject string) {
	pluginserver.QuietUnlessWanted()
	var (
		server tfprotov6.ProviderServer
		held   = func() int { return -1 }
	)
	switch subject {
	case "plugin-go":
		server = minimalServer{}
	case "framework", "framework-released":
		framework := providerserver.NewProtocol6(emptyProvider{})()
		held = func() int { return contextsHeld(framework) }
		server = framework
		if subject == "framework-released" {
			server = pluginserver.ReleaseEnded(framework)
		}
	default:
		fmt.Fprintf(os.Stderr, "rpcrss: unknown subject %q\n", subject)
		os.Exit(2)
	}
	go reportOnSignal(held)
	// providerserver.Serve does exactly this, with a server it builds itself.
	if err := tf6server.Serve(address, func() tfprotov6.ProviderServer { return server }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// reportOnSignal writes "<heap in use after GC> <framework contexts held> <goroutines>" to
// $RPCRSS_REPORT on each SIGUSR1.
func reportOnSignal(held func() int) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, reportSignal)
	for range signals {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		line := fmt.Sprintf("%d %d %d\n", ms.HeapInuse, held(), runtime.NumGoroutine()-1)
		path := os.Getenv(envReport)
		if err := os.WriteFile(path+".tmp", []byte(line), 0o644); err == nil {
			_ = os.Rename(path+".tmp", path)
		}
	}
}

// contextsHeld is len(contextCancels) of the framework's protocol 6 server
// (terraform-plugin-framework internal/proto6server/serve.go): the cancel functions of every
// request context it has registered and not yet cancelled.
func contextsHeld(server tfprotov6.ProviderServer) int {
	v := reflect.ValueOf(server)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return -1
	}
	f := v.Elem().FieldByName("contextCancels")
	if !f.IsValid() || f.Kind() != reflect.Slice {
		return -1
	}
	return f.Len()
}

// minimalServer is the least a terraform-plugin-go provider can be for GetMetadata; any other
// request would reach the nil embedded interface and panic, and rpcrss sends none.
type minimalServer struct{ tfprotov6.ProviderServer }

func (minimalServer) GetMetadata(context.Context, *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return &tfprotov6.GetMetadataResponse{ServerCapabilities: &tfprotov6.ServerCapabilities{}}, nil
}

// emptyProvider is a framework provider with nothing in it.
type emptyProvider struct{}

func (emptyProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "rpcrss"
}

func (emptyProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (emptyProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (emptyProvider) Resources(context.Context) []func() resource.Resource { return nil }

func (emptyProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
