package valkey_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The fault matrix, client half: every entry point of the client against every way a
// connection fails (faultproxy.Failures). No call panics or returns a nil result without an
// error; each failure is the typed error its row names, and every error names the address.
// The provider's half (internal/provider) runs the same rows through the real CLI.

// faultEntry is one way the provider uses the client. It runs against a stream holding two
// entries and the group "g"; group is a group that does not exist yet.
type faultEntry struct {
	name string
	run  func(ctx context.Context, c *valkey.Client, stream string) error
}

var faultEntries = []faultEntry{
	{"EnsureGroup", func(ctx context.Context, c *valkey.Client, stream string) error {
		_, _, err := c.EnsureGroup(ctx, stream, "new-group", valkey.StartHead)
		return err
	}},
	{"refresh", func(ctx context.Context, c *valkey.Client, stream string) error {
		if _, found, err := c.Group(ctx, stream, "g"); err != nil || !found {
			return errors.Join(err, errNotFound(found))
		}
		return nil
	}},
	{"plan survey", func(ctx context.Context, c *valkey.Client, stream string) error {
		s, err := c.Survey(ctx, stream)
		if err == nil && (!s.Exists || len(s.Groups) != 1 || s.Backlog.Length != 2) {
			return errors.New("survey does not match the seeded stream")
		}
		return err
	}},
	{"stream data source", func(ctx context.Context, c *valkey.Client, stream string) error {
		s, err := c.StreamInfo(ctx, stream)
		if err == nil && (s.Length != 2 || len(s.Groups) != 1) {
			return errors.New("stream info does not match the seeded stream")
		}
		return err
	}},
	{"query (list by pattern)", func(ctx context.Context, c *valkey.Client, stream string) error {
		var groups []string
		for g, err := range c.ListGroups(ctx, valkey.ListOptions{Match: stream}) {
			if err != nil {
				return err
			}
			groups = append(groups, g.Name)
		}
		if !slices.Equal(groups, []string{"g"}) {
			return fmt.Errorf("listed %q, want the seeded group", groups)
		}
		return nil
	}},
	{"group data source", func(ctx context.Context, c *valkey.Client, stream string) error {
		g, _, err := c.GroupDetail(ctx, stream, "g")
		if err == nil && g.Name != "g" {
			return errors.New("group detail does not match the seeded group")
		}
		return err
	}},
}

func errNotFound(found bool) error {
	if found {
		return nil
	}
	return errors.New("group not found")
}

// faultWant checks one cell: the error an entry point returned, given the row's address.
type faultWant func(t *testing.T, err error, addr string)

func wantOK(t *testing.T, err error, _ string) {
	t.Helper()
	if err != nil {
		t.Errorf("err = %v, want success", err)
	}
}

func wantUnreachable(causes ...valkey.Cause) faultWant {
	return func(t *testing.T, err error, addr string) {
		t.Helper()
		expectUnreachable(t, err, addr, causes...)
	}
}

func wantRefused(code string) faultWant {
	return func(t *testing.T, err error, addr string) {
		t.Helper()
		var refused *valkey.RefusedError
		if !errors.As(err, &refused) || refused.Code() != code || !strings.Contains(err.Error(), addr) {
			t.Errorf("err = %T %v, want a %s refusal naming %s", err, err, code, addr)
		}
	}
}

// wantUnknown expects EnsureGroup's lost reply, lost for the given cause: never an outcome,
// always loud.
func wantUnknown(cause valkey.Cause) faultWant {
	return func(t *testing.T, err error, addr string) {
		t.Helper()
		var unknown *valkey.UnknownOutcomeError
		if !errors.As(err, &unknown) || unknown.Addr != addr || unknown.Group != "new-group" {
			t.Errorf("err = %T %v, want UnknownOutcomeError for new-group at %s", err, err, addr)
			return
		}
		if got := unknown.Cause(); got != cause {
			t.Errorf("the reply was lost for cause %d (%v), want %d", got, err, cause)
		}
	}
}

// wantNoToken expects the failure to sign a token: the connection never opened, at step "IAM token".
func wantNoToken(t *testing.T, err error, addr string) {
	t.Helper()
	if u := unreachable(t, err, addr, valkey.CauseOther); u.Step != "IAM token" || u.Token != "AWS IAM" {
		t.Errorf("step %q token %q, want the AWS IAM token's step (err %v)", u.Step, u.Token, err)
	}
}

// matrixAWS are the credentials an AWS IAM row's Env gives the credential chain, injected: the
// chain reads the process's environment, which a parallel test cannot set. With none, they
// fail as the chain does when it finds nothing (the CLI half runs the chain itself).
func matrixAWS(env map[string]string) aws.CredentialsProvider {
	if key := env["AWS_ACCESS_KEY_ID"]; key != "" {
		return credentials.NewStaticCredentialsProvider(key, env["AWS_SECRET_ACCESS_KEY"], "")
	}
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, errors.New("no credentials in the environment, shared files or metadata")
	})
}

// faultRows is the matrix: for each failure, what each entry point must return. A row names a
// want for EnsureGroup and one for the reads, or per entry where they differ.
var faultRows = map[string]struct{ ensure, reads faultWant }{
	"refused port":                         {wantUnreachable(valkey.CauseRefused), wantUnreachable(valkey.CauseRefused)},
	"server never answers":                 {wantUnreachable(valkey.CauseTimeout), wantUnreachable(valkey.CauseTimeout)},
	"wrong password":                       {wantUnreachable(valkey.CauseAuth), wantUnreachable(valkey.CauseAuth)},
	"no password":                          {wantUnreachable(valkey.CauseAuth), wantUnreachable(valkey.CauseAuth)},
	"ACL user without permission":          {wantRefused("NOPERM"), wantRefused("NOPERM")},
	"database the server lacks":            {wantUnreachable(valkey.CauseNoDatabase), wantUnreachable(valkey.CauseNoDatabase)},
	"TLS to a plain port":                  {wantUnreachable(valkey.CauseTimeout, valkey.CauseNotTLS), wantUnreachable(valkey.CauseTimeout, valkey.CauseNotTLS)},
	"plain to a TLS port":                  {wantUnreachable(valkey.CauseClosed), wantUnreachable(valkey.CauseClosed)},
	"server loading":                       {wantRefused("LOADING"), wantRefused("LOADING")},
	"replica (READONLY)":                   {wantRefused("READONLY"), wantOK},
	"out of memory (OOM)":                  {wantRefused("OOM"), wantOK},
	"connection cut mid-reply":             {wantUnknown(valkey.CauseClosed), wantUnreachable(valkey.CauseClosed)},
	"AWS IAM token refused":                {wantUnreachable(valkey.CauseAuth), wantUnreachable(valkey.CauseAuth)},
	"no AWS credentials":                   {wantNoToken, wantNoToken},
	"SOCKS5 proxy not listening":           {wantUnreachable(valkey.CauseProxyUnreachable), wantUnreachable(valkey.CauseProxyUnreachable)},
	"SOCKS5 proxy refuses the CONNECT":     {wantUnreachable(valkey.CauseProxyRefused), wantUnreachable(valkey.CauseProxyRefused)},
	"SOCKS5 proxy rejects its credentials": {wantUnreachable(valkey.CauseProxyRefused), wantUnreachable(valkey.CauseProxyRefused)},
}

func TestFaultMatrix(t *testing.T) {
	t.Parallel()
	for _, fc := range faultproxy.Failures() {
		row, ok := faultRows[fc.Name]
		if !ok {
			t.Errorf("failure %q has no row in the matrix", fc.Name)
			continue
		}
		t.Run(fc.Name, func(t *testing.T) {
			t.Parallel()
			stream := key(t, "stream")
			f := fc.Setup(t, stream)
			for _, e := range faultEntries {
				t.Run(e.name, func(t *testing.T) {
					opts := valkey.Options{URL: f.URL, Username: f.Username, Password: f.Password,
						DialTimeout: time.Second, CommandTimeout: time.Second, MaxRetries: new(1)}
					if f.TLSInsecure {
						opts.TLS = &valkey.TLSOptions{InsecureSkipVerify: true}
					}
					if f.CACertFile != "" {
						opts.TLS = &valkey.TLSOptions{CACertFile: f.CACertFile}
					}
					opts.Proxy = f.Proxy
					newClient := valkey.NewClient
					if a := f.AWSIAM; a != nil {
						opts.AWSIAM = &valkey.AWSIAMOptions{Service: a.Service, CacheName: a.CacheName, Region: a.Region}
						newClient = func(opts valkey.Options) (*valkey.Client, error) {
							return valkey.NewClientWithAWS(opts, matrixAWS(f.Env), time.Now)
						}
					}
					c, err := newClient(opts)
					if err != nil {
						t.Fatal(err)
					}
					defer func() { _ = c.Close() }()
					want := row.reads
					if e.name == "EnsureGroup" {
						want = row.ensure
					}
					want(t, e.run(context.Background(), c, stream), f.Addr)
				})
			}
		})
	}
}

// TestEnsureGroup_LostReplyIsNeverAnAdoption: the server ran XGROUP CREATE, and its reply was
// lost. EnsureGroup must not send it again (a resend answers BUSYGROUP and reads as an adoption of
// the group this very call created); it reports the outcome as unknown, with what the server
// shows now. A connection that could not be opened, by contrast, is tried again.
func TestEnsureGroup_LostReplyIsNeverAnAdoption(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := srv.Client()
	defer func() { _ = admin.Close() }()
	ctx, stream := context.Background(), key(t, "stream")
	valkeytest.XAdd(t, admin, stream, "1-1", "1-2")
	proxy := faultproxy.StartProxyT(t, srv.Addr(), faultproxy.Fault{Command: "XGROUP CREATE", Action: faultproxy.DropReply, Times: 1})
	c := newClient(t, valkey.Options{URL: proxy.URL(), MaxRetries: new(3)})

	outcome, _, err := c.EnsureGroup(ctx, stream, "lost", valkey.StartHead)
	var unknown *valkey.UnknownOutcomeError
	if !errors.As(err, &unknown) || outcome != 0 {
		t.Fatalf("EnsureGroup after a lost reply = %v, %v; want no outcome and an UnknownOutcomeError", outcome, err)
	}
	if unknown.Cause() != valkey.CauseClosed {
		t.Errorf("the reply was lost for cause %d (%v); the proxy closed the connection instead of replying", unknown.Cause(), err)
	}
	if calls := valkeytest.CommandCalls(t, admin, "xgroup|create"); calls != 1 {
		t.Errorf("XGROUP CREATE ran %d times; a create that may have run is never sent again", calls)
	}
	if !unknown.Now.GroupExists || unknown.Now.Group.LastDeliveredID != "0-0" || unknown.NowErr != nil {
		t.Errorf("what the server shows now = %+v (err %v); want the group, at the head", unknown.Now, unknown.NowErr)
	}
	// Applied again, EnsureGroup adopts the group the lost create made.
	if outcome, g, err := c.EnsureGroup(ctx, stream, "lost", valkey.StartHead); err != nil || outcome != valkey.Adopted || g.LastDeliveredID != "0-0" {
		t.Errorf("second EnsureGroup = %v, %+v, %v; want the group adopted at 0-0", outcome, g, err)
	}
}

// TestEnsureGroup_RetriesOnlyConnectionsThatNeverOpened: a handshake that fails (here HELLO's
// reply dropped, twice) is tried again up to MaxRetries, since nothing of EnsureGroup's was sent.
func TestEnsureGroup_RetriesOnlyConnectionsThatNeverOpened(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := srv.Client()
	defer func() { _ = admin.Close() }()
	ctx, stream := context.Background(), key(t, "stream")
	proxy := faultproxy.StartProxyT(t, srv.Addr(), faultproxy.Fault{Command: "HELLO", Action: faultproxy.DropReply, Times: 2})
	c := newClient(t, valkey.Options{URL: proxy.URL(), MaxRetries: new(2)})
	if outcome, _, err := c.EnsureGroup(ctx, stream, "g", valkey.StartNew); err != nil || outcome != valkey.Created {
		t.Fatalf("EnsureGroup after two failed handshakes = %v, %v; want Created on the third connection", outcome, err)
	}
	// Every handshake failing: EnsureGroup gives up after MaxRetries more attempts. (go-redis opens
	// a pipeline's connection in its pipeline pool and, failing that, in its main pool: one
	// attempt may be more than one handshake, so attempts are counted against MaxRetries 0.)
	handshakes := func(retries int) int {
		proxy.Inject(faultproxy.Fault{Command: "HELLO", Action: faultproxy.DropReply})
		c := newClient(t, valkey.Options{URL: proxy.URL(), MaxRetries: new(retries)})
		_, _, err := c.EnsureGroup(ctx, stream, "h", valkey.StartNew)
		if u := unreachable(t, err, proxy.Addr(), valkey.CauseClosed); u.Step != "HELLO" {
			t.Errorf("step = %q, want HELLO", u.Step)
		}
		return proxy.Hits()
	}
	if once, thrice := handshakes(0), handshakes(2); thrice != 3*once {
		t.Errorf("%d handshakes with MaxRetries 2, %d with none; want three attempts", thrice, once)
	}
	if calls := valkeytest.CommandCalls(t, admin, "xgroup|create"); calls != 1 {
		t.Errorf("XGROUP CREATE ran %d times, want once (the first client's)", calls)
	}
}

// TestReads_KeepMaxRetries: a read whose connection is cut mid-reply is retried (reads are
// safe to repeat), MaxRetries times.
func TestReads_KeepMaxRetries(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := srv.Client()
	defer func() { _ = admin.Close() }()
	ctx, stream := context.Background(), key(t, "stream")
	valkeytest.XAdd(t, admin, stream, "1-1")
	proxy := faultproxy.StartProxyT(t, srv.Addr(), faultproxy.Fault{Command: "XINFO STREAM", Action: faultproxy.CutReply, Times: 2})
	c := newClient(t, valkey.Options{URL: proxy.URL(), MaxRetries: new(2)})
	if s, err := c.StreamInfo(ctx, stream); err != nil || s.Length != 1 {
		t.Fatalf("StreamInfo after two cut replies = %+v, %v; want the stream on the third try", s, err)
	}
}

// TestClient_HandshakeFailuresAreOneError: whatever first uses a connection (a pipeline or
// one command), a failed SELECT is the same UnreachableError, with the step and the server's
// words.
func TestClient_HandshakeFailuresAreOneError(t *testing.T) {
	t.Parallel()
	addr := server(t).Addr()
	for _, e := range faultEntries {
		c := newClient(t, valkey.Options{URL: "valkey://" + addr + "/99", MaxRetries: new(0)})
		err := e.run(context.Background(), c, key(t, "s"))
		u := unreachable(t, err, addr, valkey.CauseNoDatabase)
		if u.Step != "SELECT" || !strings.Contains(u.Error(), "DB index is out of range") {
			t.Errorf("%s: %v; want SELECT's failure in the server's words", e.name, err)
		}
		if slices.Contains([]string{"XGROUP CREATE", "XINFO GROUPS"}, u.Step) {
			t.Errorf("%s: reported as a refused command", e.name)
		}
	}
}

// TestEnsureGroup_PoolTimeoutIsNotAnUnknownOutcome: when every connection of the pool is busy,
// go-redis gives up before writing anything, so EnsureGroup must not report a lost reply: the
// error names the address and the pool, and XGROUP CREATE never ran. Once a connection is
// free, EnsureGroup creates the group.
func TestEnsureGroup_PoolTimeoutIsNotAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := srv.Client()
	defer func() { _ = admin.Close() }()
	ctx, stream := context.Background(), key(t, "stream")
	c, err := valkey.NewClientWithPool(valkey.Options{URL: srv.URL(), MaxRetries: new(1)}, 1, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	// Hold the pool's one connection with a blocking read.
	busy := make(chan error, 1)
	go func() {
		busy <- c.Universal().Do(ctx, "XREAD", "BLOCK", 1500, "STREAMS", key(t, "idle"), "$").Err()
	}()
	deadline := time.Now().Add(5 * time.Second)
	for c.Universal().PoolStats().TotalConns == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the XREAD is on the wire
	_, _, err = c.EnsureGroup(ctx, stream, "g", valkey.StartHead)
	var unknown *valkey.UnknownOutcomeError
	var u *valkey.UnreachableError
	switch {
	case errors.As(err, &unknown):
		t.Fatalf("EnsureGroup with the pool busy = %v; nothing was written, so the outcome is known", err)
	case !errors.As(err, &u) || !errors.Is(err, redis.ErrPoolTimeout) || !strings.Contains(err.Error(), srv.Addr()):
		t.Fatalf("EnsureGroup with the pool busy = %v (%T); want an UnreachableError naming %s and the pool timeout", err, err, srv.Addr())
	}
	if calls := valkeytest.CommandCalls(t, admin, "xgroup|create"); calls != 0 {
		t.Errorf("XGROUP CREATE ran %d times while the pool was busy, want 0", calls)
	}
	if err := <-busy; !errors.Is(err, redis.Nil) {
		t.Fatalf("blocking XREAD = %v, want redis.Nil after its timeout", err)
	}
	if outcome, _, err := c.EnsureGroup(ctx, stream, "g", valkey.StartHead); err != nil || outcome != valkey.Created {
		t.Errorf("EnsureGroup with the pool free = %v, %v; want Created", outcome, err)
	}
}
