package valkey_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// fakeTokenEndpoint is Google's OAuth2 token endpoint on loopback: each request gets a new
// access token that expires at once (oauth2 refreshes a token 10 seconds before it expires),
// and the token is made the server user's only password before it is handed out, as
// Memorystore accepts the current token of a principal.
type fakeTokenEndpoint struct {
	mu     sync.Mutex
	issued []string
}

func (f *fakeTokenEndpoint) start(t *testing.T, admin *redis.Client, user string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "refresh_token" || r.Form.Get("refresh_token") != "test-refresh" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		token := fmt.Sprintf("ya29.test-%d", len(f.issued)+1)
		f.issued = append(f.issued, token)
		f.mu.Unlock()
		if err := admin.Do(r.Context(), "ACL", "SETUSER", user, "on", "resetpass", ">"+token, "~*", "+@all").Err(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 1})
	}))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "adc.json")
	creds, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "test-client", "client_secret": "test-secret",
		"refresh_token": "test-refresh", "token_uri": srv.URL + "/token"})
	if err := os.WriteFile(file, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func (f *fakeTokenEndpoint) count() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.issued) }

// TestGCPIAM_AccessTokenReachesAUTHAndIsRefreshed: the access token from the credentials file's
// token endpoint is the AUTH password, and a connection opened after the token expired fetches
// and sends a new one.
func TestGCPIAM_AccessTokenReachesAUTHAndIsRefreshed(t *testing.T) {
	t.Parallel()
	s, pki := valkeytest.StartTLST(t, false)
	admin := s.Client()
	t.Cleanup(func() { _ = admin.Close() })
	user := "memorystore-user"
	endpoint := &fakeTokenEndpoint{}
	file := endpoint.start(t, admin, user)
	c := newClient(t, valkey.Options{URL: "valkey://" + s.TLSAddr(), Username: user, TLS: &valkey.TLSOptions{CACert: string(pki.CACert)},
		GCPIAM: &valkey.GCPIAMOptions{CredentialsFile: file}})
	ctx, stream := context.Background(), key(t, "stream")
	for round := range 3 {
		if round > 0 {
			// The server closes the user's connections; the next ones must bring the new token.
			if err := admin.Do(ctx, "CLIENT", "KILL", "USER", user).Err(); err != nil {
				t.Fatal(err)
			}
			_ = c.Universal().Ping(ctx).Err()
			_, _ = c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error { return p.Ping(ctx).Err() })
		}
		if _, _, err := c.EnsureGroup(ctx, stream, fmt.Sprintf("g%d", round), valkey.StartNew); err != nil {
			t.Fatalf("round %d (after %d tokens): %v", round, endpoint.count(), err)
		}
	}
	if n := endpoint.count(); n < 3 {
		t.Errorf("%d tokens fetched for 3 rounds of new connections, want a refresh each round", n)
	}
}

// TestGCPIAM_NeedsTLS: a Google access token is never sent in the clear.
func TestGCPIAM_NeedsTLS(t *testing.T) {
	_, err := valkey.NewClient(valkey.Options{URL: "valkey://10.0.0.3:6379", GCPIAM: &valkey.GCPIAMOptions{}})
	var optionErr *valkey.OptionError
	if !errors.As(err, &optionErr) || optionErr.Field != "GCPIAM" {
		t.Errorf("NewClient = %v, want an OptionError on GCPIAM", err)
	}
}
