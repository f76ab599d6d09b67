package valkey_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// iamServer is a TLS server whose ACL user iam-user has, as its only password, the token of
// a chosen time: what ElastiCache accepts at that time, as far as a test can say without AWS.
type iamServer struct {
	t     *testing.T
	admin *redis.Client
	opts  valkey.Options
}

const iamUser = "iam-user"

func newIAMServer(t *testing.T) *iamServer {
	s, pki := valkeytest.StartTLST(t, false)
	admin := s.Client()
	t.Cleanup(func() { _ = admin.Close() })
	return &iamServer{t: t, admin: admin, opts: valkey.Options{
		URL: "valkey://" + s.TLSAddr(), Username: iamUser, TLS: &valkey.TLSOptions{CACert: string(pki.CACert)},
		AWSIAM: &valkey.AWSIAMOptions{Service: valkey.AWSElastiCacheServerless, CacheName: "my-cache", Region: "eu-west-1"},
	}}
}

// rotate makes token (the SDK's for some time) the user's one password, and closes the
// user's connections, so that only a connection opened with that token gets in.
func (s *iamServer) rotate(token string) {
	s.t.Helper()
	ctx := context.Background()
	if err := s.admin.Do(ctx, "ACL", "SETUSER", iamUser, "on", "resetpass", ">"+token, "~*", "+@all").Err(); err != nil {
		s.t.Fatal(err)
	}
	if err := s.admin.Do(ctx, "CLIENT", "KILL", "USER", iamUser).Err(); err != nil && !errors.As(err, new(redis.Error)) {
		s.t.Fatal(err) // an error reply means there was no connection to kill
	}
}

// TestAWSIAM_NewConnectionsSignFreshTokens: across an apply of 90 minutes (six rotations of
// 15 minutes on the injected clock), every connection opened after a rotation gets in with the
// token of its own time, and creates and reads go on; a token the server refuses is an
// authentication failure that says IAM was on.
func TestAWSIAM_NewConnectionsSignFreshTokens(t *testing.T) {
	t.Parallel()
	srv := newIAMServer(t)
	clock := &fakeClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	var times []time.Time // every 15 minutes for 90 minutes, and one an hour after the last
	for i := range 7 {
		times = append(times, clock.Now().Add(time.Duration(i)*15*time.Minute))
	}
	times = append(times, times[6].Add(time.Hour))
	tokens := make([]string, len(times))
	for i, at := range times {
		tokens[i] = sdkToken(t, srv.opts, at)
	}
	srv.rotate(tokens[0])
	c, err := valkey.NewClientWithAWS(srv.opts, staticAWS, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, stream := context.Background(), key(t, "stream")

	for round := range 7 {
		if round > 0 {
			clock.Advance(15 * time.Minute)
			srv.rotate(tokens[round])
			// The server closed the pool's connections. go-redis finds that out on their next
			// use (a TLS connection cannot be peeked at while idle) and retries the command on a
			// new connection, which must sign at the new time to get in: once for plain
			// commands and once for pipelines, which have their own pool.
			rdb := c.Universal()
			if err := rdb.Ping(ctx).Err(); err != nil {
				t.Fatalf("round %d: PING after the rotation: %v", round, err)
			}
			if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { return p.Ping(ctx).Err() }); err != nil {
				t.Fatalf("round %d: pipelined PING after the rotation: %v", round, err)
			}
			if _, _, err := c.Group(ctx, stream, "g0"); err != nil {
				t.Fatalf("round %d (%s): read after the rotation: %v", round, clock.Now().Format(time.Kitchen), err)
			}
		}
		group := fmt.Sprintf("g%d", round)
		if outcome, _, err := c.EnsureGroup(ctx, stream, group, valkey.StartNew); err != nil || outcome != valkey.Created {
			t.Fatalf("round %d: EnsureGroup(%s) = %v, %v", round, group, outcome, err)
		}
	}
	if got := len(serverGroups(t, srv.admin, stream)); got != 7 {
		t.Errorf("the server holds %d groups, want the 7 created across the rotations", got)
	}

	// The server now wants a token of another time than the client's clock says.
	srv.rotate(tokens[7])
	refused, _ := valkey.NewClientWithAWS(withRetries(srv.opts, 0), staticAWS, clock.Now)
	t.Cleanup(func() { _ = refused.Close() })
	_, _, err = refused.EnsureGroup(ctx, stream, "refused", valkey.StartNew)
	u := unreachable(t, err, srv.opts.URL[len("valkey://"):], valkey.CauseAuth)
	if u.Token != "AWS IAM" {
		t.Errorf("the refusal says token %q, want it to say AWS IAM was on", u.Token)
	}
}

func withRetries(opts valkey.Options, n int) valkey.Options {
	opts.MaxRetries = &n
	return opts
}

// TestAWSIAM_NeedsTLSAndNoPassword: IAM without TLS, with a password, without a user or with
// an unknown service is refused when the client is made (at plan time), naming the field.
func TestAWSIAM_NeedsTLSAndNoPassword(t *testing.T) {
	iam := func() *valkey.AWSIAMOptions {
		return &valkey.AWSIAMOptions{Service: valkey.AWSMemoryDB, CacheName: "c", Region: "us-east-1"}
	}
	for name, tc := range map[string]struct {
		opts  valkey.Options
		field string
	}{
		"no TLS":       {valkey.Options{URL: "valkey://cache:6379", Username: "u", AWSIAM: iam()}, "AWSIAM"},
		"password":     {valkey.Options{URL: "valkeys://cache:6379", Username: "u", Password: "p", AWSIAM: iam()}, "Password"},
		"url password": {valkey.Options{URL: "valkeys://u:p@cache:6379", AWSIAM: iam()}, "Password"},
		"no user":      {valkey.Options{URL: "valkeys://cache:6379", AWSIAM: iam()}, "Username"},
		"service":      {valkey.Options{URL: "valkeys://cache:6379", Username: "u", AWSIAM: &valkey.AWSIAMOptions{Service: "redshift", CacheName: "c", Region: "r"}}, "AWSIAM.Service"},
		"cache name":   {valkey.Options{URL: "valkeys://cache:6379", Username: "u", AWSIAM: &valkey.AWSIAMOptions{Service: valkey.AWSElastiCache, Region: "r"}}, "AWSIAM.CacheName"},
	} {
		_, err := valkey.NewClient(tc.opts)
		var optionErr *valkey.OptionError
		if !errors.As(err, &optionErr) || optionErr.Field != tc.field {
			t.Errorf("%s: NewClient = %v, want an OptionError on %s", name, err, tc.field)
		}
	}
	_, err := valkey.NewClient(valkey.Options{URL: "valkeys://cache:6379", Username: "u", AWSIAM: iam()})
	if err != nil {
		t.Errorf("IAM with TLS and a user: %v", err)
	}
}
