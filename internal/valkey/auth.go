package valkey

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Cloud tokens as passwords. A token lives minutes, and go-redis asks
// CredentialsProviderContext for the user and password of every connection it opens, so
// each new connection signs or fetches its own: a long apply, or a pool that reconnects,
// never presents an expired one. A failure to get a token is marked like any other failure
// to open a connection (step "IAM token"): nothing of the caller's was sent.

// tokenOptions sets up token authentication when the options ask for it.
func tokenOptions(opts Options, u *redis.UniversalOptions, s *resolved) error {
	if opts.Sentinel != nil {
		// No service that issues these tokens runs Sentinel, and go-redis would send the
		// sentinels the static sentinel password, never a token: refuse rather than half-work.
		switch {
		case opts.AWSIAM != nil:
			// A serverless cache is a cluster that shows its clients one endpoint serving every slot, so
			// it is reached either way; MemoryDB always runs in cluster mode.
			return &OptionError{Field: "AWSIAM", Reason: "cannot be used with sentinel: ElastiCache and MemoryDB have no Sentinel " +
				"(a node-based cache fails over behind its endpoints), and the sentinels would get a static password, never an " +
				"IAM token. Point url at a node-based cache's primary endpoint or a serverless cache's endpoint (valkeys://...); " +
				"or set cluster to a node-based cache's configuration endpoint, a serverless cache's endpoint or a MemoryDB " +
				"cluster's endpoint; and remove sentinel"}
		case opts.GCPIAM != nil:
			return &OptionError{Field: "GCPIAM", Reason: "cannot be used with sentinel: Memorystore for Valkey has no Sentinel " +
				"(an instance is reached at its discovery endpoint, in cluster mode or not), and the sentinels would get a " +
				"static password, never an access token. Point url at the discovery endpoint, or set cluster to it, and remove sentinel"}
		}
	}
	if opts.GCPIAM != nil {
		return gcpTokenOptions(opts, u, s)
	}
	if opts.AWSIAM == nil {
		return nil
	}
	if u.TLSConfig == nil {
		return &OptionError{Field: "AWSIAM", Reason: "needs TLS: ElastiCache and MemoryDB accept IAM tokens only over TLS " +
			"(in-transit encryption), and a token sent in the clear could be replayed by anyone on the path for 15 minutes. " +
			"Set tls (tls = {} trusts the system's roots) or use a valkeys:// url"}
	}
	if u.Password != "" {
		return &OptionError{Field: "Password", Reason: "is set, but with AWS IAM authentication the password of each connection is a fresh IAM token: unset it"}
	}
	iam, err := newAWSIAM(context.Background(), opts.AWSIAM, u.Username)
	if err != nil {
		return err
	}
	s.aws, s.token = iam, "AWS IAM"
	u.CredentialsProviderContext = func(ctx context.Context) (string, string, error) {
		token, err := iam.token(ctx)
		if err != nil {
			return "", "", opening("IAM token", "", err)
		}
		return iam.user, token, nil
	}
	u.ConnMaxLifetime = TokenConnMaxLifetime
	return nil
}

// gcpTokenOptions sets up Google IAM authentication: AUTH with the access token (as the
// username's password when one is set, else the default user's, as Google's examples send it).
func gcpTokenOptions(opts Options, u *redis.UniversalOptions, s *resolved) error {
	switch {
	case opts.AWSIAM != nil:
		return &OptionError{Field: "GCPIAM", Reason: "cannot be used together with AWS IAM: choose one"}
	case u.TLSConfig == nil:
		return &OptionError{Field: "GCPIAM", Reason: "needs TLS: an access token sent in the clear could be used by anyone on the " +
			"path until it expires. Set tls with the instance's CA (ca_cert_file = the server-ca.pem Memorystore gives)"}
	case u.Password != "":
		return &OptionError{Field: "Password", Reason: "is set, but with Google IAM authentication the password of each connection is a fresh access token: unset it"}
	}
	iam := &gcpIAM{file: opts.GCPIAM.CredentialsFile}
	s.token = "Google IAM"
	user := u.Username
	u.CredentialsProviderContext = func(ctx context.Context) (string, string, error) {
		token, err := iam.token(ctx)
		if err != nil {
			return "", "", opening("IAM token", "", err)
		}
		return user, token, nil
	}
	return nil
}
