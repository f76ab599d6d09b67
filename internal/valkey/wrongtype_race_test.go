package valkey_test

import (
	"context"
	"errors"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestStreamInfo_KeyRemovedBeforeTypeIsNotCalledANone: a read meets WRONGTYPE, and another
// client deletes the key right before the TYPE that names its type (an event of the proxy, at
// that exact command). The error must not say the key "holds a none": the type it held is
// gone, and the message says only that it held a non-stream value. (Found by the fault
// campaign's events during a step.)
func TestStreamInfo_KeyRemovedBeforeTypeIsNotCalledANone(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := srv.Client()
	defer func() { _ = admin.Close() }()
	ctx, stream := context.Background(), key(t, "stream")
	if err := admin.Set(ctx, stream, "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.StartProxyT(t, srv.Addr(), faultproxy.Fault{Command: "TYPE", Key: stream, Times: 1, Before: func() {
		if err := admin.Del(ctx, stream).Err(); err != nil {
			t.Error(err)
		}
	}})
	c := newClient(t, valkey.Options{URL: proxy.URL()})
	_, err := c.StreamInfo(ctx, stream)
	var wrong *valkey.WrongTypeError
	if !errors.As(err, &wrong) || wrong.Type != "non-stream value" {
		t.Errorf("StreamInfo with the key deleted before TYPE: %v; want a WrongTypeError of a non-stream value", err)
	}
	if n := admin.Exists(ctx, stream).Val(); n != 0 {
		t.Errorf("the key is still there: the event did not run before TYPE")
	}
}
