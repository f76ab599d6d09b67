package valkey

import (
	"context"
	"os"
	"strconv"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Google Memorystore for Valkey IAM authentication: the password of each new connection is an
// OAuth2 access token of the principal (which needs roles/memorystore.dbConnectionUser), sent
// with AUTH as Google documents it
// (https://cloud.google.com/memorystore/docs/valkey/about-iam-auth). The token comes from
// Application Default Credentials and is fetched again once it is about to expire.

// GCPScope is the OAuth2 scope the access token is asked for.
const GCPScope = "https://www.googleapis.com/auth/cloud-platform"

// GCPIAMOptions turn Google IAM authentication on. TLS is required.
type GCPIAMOptions struct {
	CredentialsFile string // "": Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, the metadata server)
}

// CredentialsFileError is a Google credentials file that was named but could not be used: it
// could not be read, or it holds no credentials the Google library accepts. It is told apart
// from Application Default Credentials that found nothing, whose remedy differs.
type CredentialsFileError struct {
	File string
	Err  error
}

func (e *CredentialsFileError) Error() string {
	return "the Google credentials file " + strconv.Quote(e.File) + " cannot be used: " + e.Err.Error()
}

func (e *CredentialsFileError) Unwrap() error { return e.Err }

// gcpIAM fetches the tokens of one client. The credentials are found when the first
// connection opens, so that a plan that dials nothing never probes for a metadata server.
type gcpIAM struct {
	file string
	once sync.Once
	ts   oauth2.TokenSource
	err  error
}

// token ignores the connection's context: the credentials are looked up once for every
// connection of the client, and the token source refreshes on its own.
func (g *gcpIAM) token(_ context.Context) (string, error) {
	g.once.Do(func() {
		var creds *google.Credentials
		if g.file == "" {
			creds, g.err = google.FindDefaultCredentials(context.Background(), GCPScope)
		} else {
			var data []byte
			if data, g.err = os.ReadFile(g.file); g.err == nil {
				creds, g.err = google.CredentialsFromJSON(context.Background(), data, GCPScope) //nolint:staticcheck // the file is the user's own choice, as with ADC
			}
			if g.err != nil {
				g.err = &CredentialsFileError{File: g.file, Err: g.err}
			}
		}
		if g.err == nil {
			g.ts = creds.TokenSource // reuses a token until it is about to expire
		}
	})
	if g.err != nil {
		return "", g.err
	}
	tok, err := g.ts.Token()
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}
