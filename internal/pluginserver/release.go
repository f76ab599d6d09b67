package pluginserver

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// releaseEvery is how many requests end between two attempts to release the contexts the
// framework keeps. An attempt releases only when no request runs (end takes the lock with
// TryLock and never waits), so under a steady stream of overlapping requests the ended ones
// can pile up past this count until the first quiet moment; Terraform's walks have one
// between operations, and a run of 64 ends usually holds a few hundred kilobytes.
const releaseEvery = 64

// frameworkServer is every RPC the framework's protocol 6 server answers. The list, action and
// state store interfaces are deprecated only because they will move into ProviderServer;
// terraform-plugin-go asks for them by type assertion, so the wrapper must offer them too.
//
//nolint:staticcheck // SA1019: see above.
type frameworkServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ProviderServerWithListResource
	tfprotov6.ProviderServerWithActions
	tfprotov6.ProviderServerWithStateStores
}

// releasingServer hands every request to the framework unchanged and, once no request is
// running, lets the framework drop the requests that have ended.
//
// The framework derives each request's context with context.WithCancel and appends the cancel
// function to a slice that only StopProvider empties (registerContext, cancelRegisteredContexts
// and StopProvider in terraform-plugin-framework v1.19.0's internal/proto6server).
// Terraform sends StopProvider on interrupt only, so every request's whole context (its SDK and
// provider loggers, their options, the gRPC stream's metadata) stays reachable until the process
// exits: 12 KB (GetMetadata) to some 25 KB (resource requests) per request, 98 KB per resource
// in a plan. The framework's StopProvider does nothing but cancel and forget those contexts
// (TestFramework_StopProviderOnlyCancelsRegisteredContexts pins it); called when no request is
// running, it cancels only contexts whose requests have returned, which nothing reads any more
// (gRPC cancels them itself as each stream ends).
//
// bench/cmd/rpcrss reproduces the growth for an upstream report. When upstream stops keeping
// ended requests, TestFramework_KeepsEndedRequestContexts fails and this wrapper can go.
type releasingServer struct {
	down frameworkServer
	// running is read-held by each request for as long as it runs; a release write-locks it
	// with TryLock, so it never waits for requests, and requests wait only for a release.
	running sync.RWMutex
	ended   atomic.Int64 // requests ended since the last release
	// releases counts releases, for tests.
	releases atomic.Int64
}

// ReleaseEnded wraps the framework's protocol 6 server (providerserver.NewProtocol6) in a
// releasingServer; any other server is returned as is.
func ReleaseEnded(server tfprotov6.ProviderServer) tfprotov6.ProviderServer {
	down, ok := server.(frameworkServer)
	if !ok {
		return server
	}
	return &releasingServer{down: down}
}

func (s *releasingServer) begin() { s.running.RLock() }

// end marks one request as over, and every releaseEvery requests lets the framework forget
// the ended ones if none is running now. When one is, the next request to end tries again.
func (s *releasingServer) end() {
	s.running.RUnlock()
	if s.ended.Add(1) < releaseEvery || !s.running.TryLock() {
		return
	}
	defer s.running.Unlock()
	s.ended.Store(0)
	s.releases.Add(1)
	_, _ = s.down.StopProvider(context.Background(), &tfprotov6.StopProviderRequest{})
}

// call runs one request between begin and end.
func call[Req, Resp any](s *releasingServer, ctx context.Context, req Req, rpc func(context.Context, Req) (Resp, error)) (Resp, error) {
	s.begin()
	defer s.end()
	return rpc(ctx, req)
}

// held is seq, ending its request once the iterator has run: terraform-plugin-go drains the
// streamed responses after the call returns, still under the request's context. If nothing ever
// runs the iterator, releases stop; they never cut a request short.
func held[T any](s *releasingServer, seq iter.Seq[T]) iter.Seq[T] {
	end := sync.OnceFunc(s.end)
	return func(yield func(T) bool) {
		defer end()
		seq(yield)
	}
}

// streamed runs a request whose response carries an iterator; with returns the response with
// its iterator replaced by held, or nil when the response carries none.
func streamed[Req, Resp any](s *releasingServer, ctx context.Context, req Req, rpc func(context.Context, Req) (*Resp, error), with func(*Resp) *Resp) (*Resp, error) {
	s.begin()
	resp, err := rpc(ctx, req)
	if err == nil && resp != nil {
		if out := with(resp); out != nil {
			return out, nil
		}
	}
	s.end()
	return resp, err
}

func (s *releasingServer) GetMetadata(ctx context.Context, req *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return call(s, ctx, req, s.down.GetMetadata)
}

func (s *releasingServer) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return call(s, ctx, req, s.down.GetProviderSchema)
}

func (s *releasingServer) GetResourceIdentitySchemas(ctx context.Context, req *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return call(s, ctx, req, s.down.GetResourceIdentitySchemas)
}

func (s *releasingServer) ValidateProviderConfig(ctx context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return call(s, ctx, req, s.down.ValidateProviderConfig)
}

func (s *releasingServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return call(s, ctx, req, s.down.ConfigureProvider)
}

// StopProvider is Terraform's own stop (on interrupt): it cancels the running requests too.
func (s *releasingServer) StopProvider(ctx context.Context, req *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return call(s, ctx, req, s.down.StopProvider)
}

func (s *releasingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return call(s, ctx, req, s.down.ValidateResourceConfig)
}

func (s *releasingServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return call(s, ctx, req, s.down.UpgradeResourceState)
}

func (s *releasingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return call(s, ctx, req, s.down.ReadResource)
}

func (s *releasingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return call(s, ctx, req, s.down.PlanResourceChange)
}

func (s *releasingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return call(s, ctx, req, s.down.ApplyResourceChange)
}

func (s *releasingServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return call(s, ctx, req, s.down.ImportResourceState)
}

func (s *releasingServer) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return call(s, ctx, req, s.down.MoveResourceState)
}

func (s *releasingServer) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return call(s, ctx, req, s.down.UpgradeResourceIdentity)
}

func (s *releasingServer) GenerateResourceConfig(ctx context.Context, req *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return call(s, ctx, req, s.down.GenerateResourceConfig)
}

func (s *releasingServer) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return call(s, ctx, req, s.down.ValidateDataResourceConfig)
}

func (s *releasingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return call(s, ctx, req, s.down.ReadDataSource)
}

func (s *releasingServer) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return call(s, ctx, req, s.down.CallFunction)
}

func (s *releasingServer) GetFunctions(ctx context.Context, req *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return call(s, ctx, req, s.down.GetFunctions)
}

func (s *releasingServer) ValidateEphemeralResourceConfig(ctx context.Context, req *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	return call(s, ctx, req, s.down.ValidateEphemeralResourceConfig)
}

func (s *releasingServer) OpenEphemeralResource(ctx context.Context, req *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return call(s, ctx, req, s.down.OpenEphemeralResource)
}

func (s *releasingServer) RenewEphemeralResource(ctx context.Context, req *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	return call(s, ctx, req, s.down.RenewEphemeralResource)
}

func (s *releasingServer) CloseEphemeralResource(ctx context.Context, req *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	return call(s, ctx, req, s.down.CloseEphemeralResource)
}

func (s *releasingServer) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	return call(s, ctx, req, s.down.ValidateListResourceConfig)
}

func (s *releasingServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	return streamed(s, ctx, req, s.down.ListResource, func(r *tfprotov6.ListResourceServerStream) *tfprotov6.ListResourceServerStream {
		if r.Results == nil {
			return nil
		}
		out := *r
		out.Results = held(s, r.Results)
		return &out
	})
}

func (s *releasingServer) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	return call(s, ctx, req, s.down.ValidateActionConfig)
}

func (s *releasingServer) PlanAction(ctx context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	return call(s, ctx, req, s.down.PlanAction)
}

func (s *releasingServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	return streamed(s, ctx, req, s.down.InvokeAction, func(r *tfprotov6.InvokeActionServerStream) *tfprotov6.InvokeActionServerStream {
		if r.Events == nil {
			return nil
		}
		out := *r
		out.Events = held(s, r.Events)
		return &out
	})
}

func (s *releasingServer) ValidateStateStoreConfig(ctx context.Context, req *tfprotov6.ValidateStateStoreConfigRequest) (*tfprotov6.ValidateStateStoreConfigResponse, error) {
	return call(s, ctx, req, s.down.ValidateStateStoreConfig)
}

func (s *releasingServer) ConfigureStateStore(ctx context.Context, req *tfprotov6.ConfigureStateStoreRequest) (*tfprotov6.ConfigureStateStoreResponse, error) {
	return call(s, ctx, req, s.down.ConfigureStateStore)
}

func (s *releasingServer) ReadStateBytes(ctx context.Context, req *tfprotov6.ReadStateBytesRequest) (*tfprotov6.ReadStateBytesStream, error) {
	return streamed(s, ctx, req, s.down.ReadStateBytes, func(r *tfprotov6.ReadStateBytesStream) *tfprotov6.ReadStateBytesStream {
		if r.Chunks == nil {
			return nil
		}
		out := *r
		out.Chunks = held(s, r.Chunks)
		return &out
	})
}

// WriteStateBytes reads Terraform's chunks within the call, so the call is the whole request.
func (s *releasingServer) WriteStateBytes(ctx context.Context, req *tfprotov6.WriteStateBytesStream) (*tfprotov6.WriteStateBytesResponse, error) {
	return call(s, ctx, req, s.down.WriteStateBytes)
}

func (s *releasingServer) GetStates(ctx context.Context, req *tfprotov6.GetStatesRequest) (*tfprotov6.GetStatesResponse, error) {
	return call(s, ctx, req, s.down.GetStates)
}

func (s *releasingServer) DeleteState(ctx context.Context, req *tfprotov6.DeleteStateRequest) (*tfprotov6.DeleteStateResponse, error) {
	return call(s, ctx, req, s.down.DeleteState)
}

func (s *releasingServer) LockState(ctx context.Context, req *tfprotov6.LockStateRequest) (*tfprotov6.LockStateResponse, error) {
	return call(s, ctx, req, s.down.LockState)
}

func (s *releasingServer) UnlockState(ctx context.Context, req *tfprotov6.UnlockStateRequest) (*tfprotov6.UnlockStateResponse, error) {
	return call(s, ctx, req, s.down.UnlockState)
}

var _ frameworkServer = (*releasingServer)(nil)
