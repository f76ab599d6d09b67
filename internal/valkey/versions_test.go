package valkey_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestServer_WhatDiffersByVersion pins what the README's table of server versions says differs
// between them, on the server the tier runs on, and that the provider reports each the same way
// on every version.
func TestServer_WhatDiffersByVersion(t *testing.T) {
	t.Parallel()
	major, _ := valkeytest.VersionT(t)
	ctx := context.Background()

	t.Run("a connection that has not authenticated", func(t *testing.T) {
		t.Parallel()
		s := valkeytest.StartT(t, valkeytest.WithArgs("--requirepass", "secret"))
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
		defer func() { _ = rdb.Close() }()
		// Valkey 9 checks authentication before it looks the command up; 8 answers an unknown
		// command (or wrong arguments) with ERR first.
		want := map[bool]string{true: "NOAUTH", false: "ERR unknown command"}[major >= 9]
		if err := rdb.Do(ctx, "NO-SUCH-COMMAND").Err(); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Valkey %d answered an unknown command before AUTH with %v; want %s", major, err, want)
		}
		// The provider sends only commands every version knows, so what it meets is the same.
		c := newClient(t, valkey.Options{URL: s.URL(), MaxRetries: new(0)})
		_, _, err := c.EnsureGroup(ctx, key(t, "stream"), "g", valkey.StartNew)
		var unreachable *valkey.UnreachableError
		if !errors.As(err, &unreachable) || unreachable.Cause() != valkey.CauseAuth {
			t.Errorf("EnsureGroup without a password: %v; want an authentication failure", err)
		}
	})

	t.Run("SELECT in Cluster mode", func(t *testing.T) {
		t.Parallel()
		node := valkeytest.StartT(t, valkeytest.WithArgs("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"))
		rdb := node.Client()
		defer func() { _ = rdb.Close() }()
		// Valkey 8 refuses SELECT in Cluster mode; 9 serves the databases below cluster-databases
		// (1 unless raised) and words the refusal as it does for a single server.
		want := map[bool]string{true: "ERR DB index is out of range", false: "ERR SELECT is not allowed in cluster mode"}[major >= 9]
		if err := rdb.Do(ctx, "SELECT", 1).Err(); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Valkey %d answered SELECT 1 in Cluster mode with %v; want %s", major, err, want)
		}
	})
}
