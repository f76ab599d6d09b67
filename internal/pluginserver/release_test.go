package pluginserver

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// testProvider is an empty framework provider whose Configure hands its request context to
// the test and, when block is set, waits for it to close.
type testProvider struct {
	configured chan context.Context
	block      chan struct{}
}

func (testProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "test"
}

func (testProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (p testProvider) Configure(ctx context.Context, _ provider.ConfigureRequest, _ *provider.ConfigureResponse) {
	tflog.Info(ctx, "test provider configured")
	if p.configured != nil {
		p.configured <- ctx
	}
	if p.block != nil {
		<-p.block
	}
}

func (testProvider) Resources(context.Context) []func() resource.Resource { return nil }

func (testProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

func newServers(t *testing.T, p testProvider) (framework tfprotov6.ProviderServer, released *releasingServer) {
	t.Helper()
	framework = providerserver.NewProtocol6(p)()
	released, ok := ReleaseEnded(framework).(*releasingServer)
	if !ok {
		t.Fatalf("ReleaseEnded did not wrap the framework's server %T", framework)
	}
	return framework, released
}

func configureRequest() *tfprotov6.ConfigureProviderRequest {
	empty := tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}
	config, err := tfprotov6.NewDynamicValue(empty, tftypes.NewValue(empty, map[string]tftypes.Value{}))
	if err != nil {
		panic(err)
	}
	return &tfprotov6.ConfigureProviderRequest{Config: &config}
}

// metadata sends n GetMetadata requests, each ending before the next begins.
func metadata(t *testing.T, s tfprotov6.ProviderServer, n int) {
	t.Helper()
	for range n {
		if _, err := s.GetMetadata(context.Background(), &tfprotov6.GetMetadataRequest{}); err != nil {
			t.Fatal(err)
		}
	}
}

// requestWithPayload sends one GetMetadata request whose context carries a 64 KiB value and
// returns a weak pointer to that value: it is nil once nothing holds the request's context.
func requestWithPayload(t *testing.T, s tfprotov6.ProviderServer) weak.Pointer[[64 << 10]byte] {
	t.Helper()
	payload := new([64 << 10]byte)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), t, payload))
	defer cancel() // as gRPC cancels a stream's context when its request ends
	if _, err := s.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{}); err != nil {
		t.Fatal(err)
	}
	return weak.Make(payload)
}

// TestFramework_KeepsEndedRequestContexts pins the upstream behaviour ReleaseEnded works
// around. When it fails, the framework no longer keeps ended requests: drop the wrapper.
func TestFramework_KeepsEndedRequestContexts(t *testing.T) {
	framework, _ := newServers(t, testProvider{})
	held := requestWithPayload(t, framework)
	metadata(t, framework, 2*releaseEvery)
	runtime.GC()
	if held.Value() == nil {
		t.Fatal("the framework let an ended request's context go: ReleaseEnded is no longer needed")
	}
	runtime.KeepAlive(framework)
}

// stopProviderPin is the framework code a release runs (terraform-plugin-framework v1.19.0,
// internal/proto6server/serve.go:32-46): StopProvider cancels and forgets the registered
// contexts, and does nothing else.
const stopProviderPin = `func (s *Server) cancelRegisteredContexts(_ context.Context) {
	s.contextCancelsMu.Lock()
	defer s.contextCancelsMu.Unlock()
	for _, cancel := range s.contextCancels {
		cancel()
	}
	s.contextCancels = nil
}

func (s *Server) StopProvider(ctx context.Context, _ *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	s.cancelRegisteredContexts(ctx)

	return &tfprotov6.StopProviderResponse{}, nil
}
`

// TestFramework_StopProviderOnlyCancelsRegisteredContexts pins the upstream behaviour a release
// relies on: the framework's StopProvider cancels the registered contexts and does nothing
// more. It reads the framework's source from the module cache, so it fails on any change to
// those two functions, whatever the change does; and it checks that the server answers as
// before once StopProvider has run.
func TestFramework_StopProviderOnlyCancelsRegisteredContexts(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "github.com/hashicorp/terraform-plugin-framework").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/hashicorp/terraform-plugin-framework: %v", err)
	}
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if got := funcSource(t, filepath.Join(dir, "internal", "proto6server", "serve.go"), "cancelRegisteredContexts", "StopProvider"); got != stopProviderPin {
		t.Fatalf("terraform-plugin-framework %s changed StopProvider (internal/proto6server/serve.go).\n"+
			"A release calls it whenever no request runs (releasingServer.end). If it still does nothing "+
			"but cancel and forget the registered contexts, update stopProviderPin; if it does more, "+
			"releasingServer must stop calling it.\nnow:\n%s\npinned:\n%s", version, got, stopProviderPin)
	}

	p := testProvider{configured: make(chan context.Context, 1)}
	framework, _ := newServers(t, p)
	before, err := framework.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = framework.ConfigureProvider(context.Background(), configureRequest()) }()
	registered := <-p.configured
	if _, err := framework.StopProvider(context.Background(), &tfprotov6.StopProviderRequest{}); err != nil {
		t.Fatal(err)
	}
	if registered.Err() == nil {
		t.Error("StopProvider did not cancel a registered request's context")
	}
	after, err := framework.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Error("the provider schema changed after StopProvider")
	}
	go func() { _, _ = framework.ConfigureProvider(context.Background(), configureRequest()) }()
	if err := (<-p.configured).Err(); err != nil {
		t.Errorf("a request after StopProvider starts with a done context: %v", err)
	}
}

// funcSource prints the named methods of file, without their doc comments, as gofmt would.
func funcSource(t *testing.T, file string, names ...string) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, name := range names {
		found := false
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
				fn.Doc, found = nil, true
				if out.Len() > 0 {
					out.WriteString("\n")
				}
				if err := printer.Fprint(&out, fset, fn); err != nil {
					t.Fatal(err)
				}
				out.WriteString("\n")
			}
		}
		if !found {
			out.WriteString("// " + name + " is gone\n")
		}
	}
	return out.String()
}

// The acceptance tests' factories (NewProtocol6WithError) serve what the binary serves.
func TestNewProtocol6WithError_ReleasesEndedRequests(t *testing.T) {
	server, err := NewProtocol6WithError(testProvider{})()
	if err != nil {
		t.Fatal(err)
	}
	released, ok := server.(*releasingServer)
	if !ok {
		t.Fatalf("NewProtocol6WithError serves %T, not the releasing wrapper", server)
	}
	metadata(t, released, releaseEvery)
	if released.releases.Load() == 0 {
		t.Error("no release after the factory's server ended its requests")
	}
}

func TestReleaseEnded_ReleasesEndedRequests(t *testing.T) {
	_, released := newServers(t, testProvider{})
	held := requestWithPayload(t, released)
	metadata(t, released, releaseEvery)
	runtime.GC()
	if held.Value() != nil {
		t.Errorf("an ended request's context is still reachable after %d more requests (%d releases)", releaseEvery, released.releases.Load())
	}
	runtime.KeepAlive(released)
}

func TestReleaseEnded_NeverCancelsARunningRequest(t *testing.T) {
	p := testProvider{configured: make(chan context.Context, 1), block: make(chan struct{})}
	_, released := newServers(t, p)
	done := make(chan error, 1)
	go func() {
		_, err := released.ConfigureProvider(context.Background(), configureRequest())
		done <- err
	}()
	running := <-p.configured

	metadata(t, released, 4*releaseEvery) // each one ends and tries to release
	if err := running.Err(); err != nil {
		t.Fatalf("a running request's context was cancelled: %v", err)
	}
	if n := released.releases.Load(); n != 0 {
		t.Fatalf("%d releases while a request was running, want 0", n)
	}

	close(p.block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	metadata(t, released, releaseEvery)
	if released.releases.Load() == 0 {
		t.Error("no release once nothing was running")
	}
}

// Terraform's own StopProvider (on interrupt) must still cancel the requests that run.
func TestReleaseEnded_StopProviderCancelsRunningRequests(t *testing.T) {
	p := testProvider{configured: make(chan context.Context, 1), block: make(chan struct{})}
	_, released := newServers(t, p)
	go func() { _, _ = released.ConfigureProvider(context.Background(), configureRequest()) }()
	running := <-p.configured
	defer close(p.block)

	if _, err := released.StopProvider(context.Background(), &tfprotov6.StopProviderRequest{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-running.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("StopProvider did not cancel the running request")
	}
}

// The provider's logger reaches it through the wrapper: TF_LOG still shows its lines.
func TestReleaseEnded_KeepsRequestLoggers(t *testing.T) {
	_, released := newServers(t, testProvider{})
	var out bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &out)
	if _, err := released.ConfigureProvider(ctx, configureRequest()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "test provider configured") {
		t.Errorf("the provider's log line is missing; logged:\n%s", out.String())
	}
}

// A streamed response ends its request only once terraform-plugin-go has drained it.
func TestReleaseEnded_StreamEndsWhenDrained(t *testing.T) {
	_, released := newServers(t, testProvider{})
	stream, err := released.ListResource(context.Background(), &tfprotov6.ListResourceRequest{TypeName: "test_none"})
	if err != nil {
		t.Fatal(err)
	}
	metadata(t, released, 2*releaseEvery)
	if n := released.releases.Load(); n != 0 {
		t.Fatalf("%d releases before the stream was drained, want 0", n)
	}
	var results int
	for range stream.Results {
		results++
	}
	if results == 0 {
		t.Error("the stream lost its results")
	}
	for range stream.Results { // a second drain must not end the request twice
	}
	metadata(t, released, releaseEvery)
	if released.releases.Load() == 0 {
		t.Error("no release after the stream was drained")
	}
}

// Every RPC the framework answers goes through the wrapper: a framework upgrade that adds one
// fails here rather than serving it unwrapped or not at all.
func TestReleaseEnded_OffersEveryFrameworkRPC(t *testing.T) {
	framework, released := newServers(t, testProvider{})
	fw, wrapped := reflect.TypeOf(framework), reflect.TypeOf(released)
	for i := range fw.NumMethod() {
		name := fw.Method(i).Name
		m, ok := wrapped.MethodByName(name)
		if !ok {
			t.Errorf("the framework server answers %s; releasingServer does not", name)
			continue
		}
		if m.Type.NumIn() != fw.Method(i).Type.NumIn() {
			t.Errorf("%s: signatures differ", name)
		}
	}
}

func TestReleaseEnded_ConcurrentRequests(t *testing.T) {
	_, released := newServers(t, testProvider{})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { metadata(t, released, 10*releaseEvery) })
	}
	wg.Wait()
	metadata(t, released, releaseEvery)
	if released.releases.Load() == 0 {
		t.Error("no release after concurrent requests ended")
	}
}
