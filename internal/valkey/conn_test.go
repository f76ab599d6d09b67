package valkey_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// unreachable asserts err is an UnreachableError of one of the given causes whose text names addr.
func unreachable(t *testing.T, err error, addr string, causes ...valkey.Cause) *valkey.UnreachableError {
	t.Helper()
	var u *valkey.UnreachableError
	if !errors.As(err, &u) {
		t.Fatalf("err = %T %v, want *valkey.UnreachableError", err, err)
	}
	if !strings.Contains(u.Error(), addr) {
		t.Errorf("error %q does not name address %s", u.Error(), addr)
	}
	if got := u.Cause(); !slices.Contains(causes, got) {
		t.Errorf("cause = %v, want one of %v (err: %v)", got, causes, u.Err)
	}
	return u
}

// expectUnreachable is unreachable for callers that need nothing more from the error.
func expectUnreachable(t *testing.T, err error, addr string, causes ...valkey.Cause) {
	t.Helper()
	_ = unreachable(t, err, addr, causes...) // it fails the test itself
}

func TestClient_TLSVerifiesServer(t *testing.T) {
	t.Parallel()
	s, pki := valkeytest.StartTLST(t, false)
	stream := key(t, "stream")
	for name, tlsOpts := range map[string]*valkey.TLSOptions{
		"ca_cert":      {CACert: string(pki.CACert)},
		"ca_cert_file": {CACertFile: pki.CACertFile, ServerName: "localhost"},
	} {
		c := newClient(t, valkey.Options{URL: "valkey://" + s.TLSAddr(), TLS: tlsOpts})
		if _, _, err := c.EnsureGroup(context.Background(), stream, name, valkey.StartNew); err != nil {
			t.Fatalf("%s: EnsureGroup over TLS: %v", name, err)
		}
	}
	rdb := s.Client() // plain port, for the assertion
	defer rdb.Close()
	if groups := serverGroups(t, rdb, stream); len(groups) != 2 {
		t.Errorf("server groups = %+v, want the two created over TLS", groups)
	}
}

func TestClient_TLSWrongCAIsRejectedClearly(t *testing.T) {
	t.Parallel()
	s, _ := valkeytest.StartTLST(t, false)
	other := valkeytest.NewPKIT(t)
	c := newClient(t, valkey.Options{URL: s.TLSURL(), TLS: &valkey.TLSOptions{CACert: string(other.CACert)}, MaxRetries: new(0)})
	_, _, err := c.EnsureGroup(context.Background(), key(t, "s"), "g", valkey.StartNew)
	expectUnreachable(t, err, s.TLSAddr(), valkey.CauseTLSVerify)
	// And with the system roots only (valkeys:// without a tls block) it fails the same way.
	c = newClient(t, valkey.Options{URL: s.TLSURL(), MaxRetries: new(0)})
	_, _, err = c.EnsureGroup(context.Background(), key(t, "s"), "g", valkey.StartNew)
	expectUnreachable(t, err, s.TLSAddr(), valkey.CauseTLSVerify)
}

func TestClient_MutualTLS(t *testing.T) {
	t.Parallel()
	s, pki := valkeytest.StartTLST(t, true)
	stream := key(t, "stream")

	noCert := newClient(t, valkey.Options{URL: s.TLSURL(), TLS: &valkey.TLSOptions{CACert: string(pki.CACert)}, MaxRetries: new(0)})
	_, _, err := noCert.EnsureGroup(context.Background(), stream, "g", valkey.StartNew)
	// The alert arrives during the handshake, or (TLS 1.3) as a reset on the first command.
	expectUnreachable(t, err, s.TLSAddr(), valkey.CauseTLSRejected, valkey.CauseClosedTLS)

	withCert := newClient(t, valkey.Options{URL: s.TLSURL(), TLS: &valkey.TLSOptions{
		CACertFile: pki.CACertFile, CertFile: pki.ClientCertFile, KeyFile: pki.ClientKeyFile,
	}})
	if _, _, err := withCert.EnsureGroup(context.Background(), stream, "g", valkey.StartNew); err != nil {
		t.Fatalf("EnsureGroup with a client certificate: %v", err)
	}
	inline := newClient(t, valkey.Options{URL: s.TLSURL(), TLS: &valkey.TLSOptions{
		CACert: string(pki.CACert), Cert: string(pki.ClientCert), Key: string(pki.ClientKey),
	}})
	if _, found, err := inline.Group(context.Background(), stream, "g"); err != nil || !found {
		t.Fatalf("Group with inline client certificate: found=%v err=%v", found, err)
	}
	rdb := s.Client()
	defer rdb.Close()
	if groups := serverGroups(t, rdb, stream); len(groups) != 1 || groups[0].Name != "g" {
		t.Errorf("server groups = %+v, want g", groups)
	}
}

func TestNewClient_TLSConfigErrors(t *testing.T) {
	t.Parallel()
	pki := valkeytest.NewPKIT(t)
	for name, tc := range map[string]struct {
		tls         valkey.TLSOptions
		field, want string
	}{
		"cert without key": {valkey.TLSOptions{Cert: string(pki.ClientCert)}, "TLS.Key", "is not set"},
		"key without cert": {valkey.TLSOptions{KeyFile: pki.ClientKeyFile}, "TLS.Cert", "is not set"},
		"missing file":     {valkey.TLSOptions{CACertFile: pki.Dir + "/nope.crt"}, "TLS.CACertFile", "cannot be read"},
		"not PEM":          {valkey.TLSOptions{CACert: "hello"}, "TLS.CACert", "no PEM certificate"},
		"string and file":  {valkey.TLSOptions{CACert: string(pki.CACert), CACertFile: pki.CACertFile}, "TLS.CACert", "use one"},
		"mismatched pair":  {valkey.TLSOptions{Cert: string(pki.ServerCert), Key: string(pki.ClientKey)}, "TLS.Cert", "does not form a key pair"},
	} {
		_, err := valkey.NewClient(valkey.Options{URL: "valkey://127.0.0.1:1", TLS: &tc.tls})
		var oe *valkey.OptionError
		if !errors.As(err, &oe) || oe.Field != tc.field || !strings.Contains(oe.Reason, tc.want) {
			t.Errorf("%s: err = %v, want an OptionError on %s saying %q", name, err, tc.field, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Errorf("%s: error repeats key material: %v", name, err)
		}
	}
}

func TestClient_MinimalACLWorksEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stream := key(t, "stream")
	other := stream + ":string"
	user, pw := server(t).ACLUser(t, valkeytest.TagPattern(stream), valkeytest.EnsureGroupACL)
	rdb := adminClient(t)
	if err := rdb.Set(ctx, other, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}

	c := newClient(t, valkey.Options{Username: user, Password: pw})
	if outcome, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil || outcome != valkey.Created {
		t.Fatalf("EnsureGroup as %s: outcome=%v err=%v", user, outcome, err)
	}
	if outcome, _, err := c.EnsureGroup(ctx, stream, "billing", valkey.StartNew); err != nil || outcome != valkey.Adopted {
		t.Fatalf("EnsureGroup again as %s: outcome=%v err=%v", user, outcome, err)
	}
	if _, found, err := newClient(t, valkey.Options{Username: user, Password: pw}).Group(ctx, stream, "billing"); err != nil || !found {
		t.Fatalf("Group as %s: found=%v err=%v", user, found, err)
	}
	// WRONGTYPE is explained with TYPE, which the minimal ACL allows.
	_, _, err := c.EnsureGroup(ctx, other, "g", valkey.StartNew)
	var wt *valkey.WrongTypeError
	if !errors.As(err, &wt) || wt.Type != "string" {
		t.Fatalf("err = %v, want WrongTypeError naming string", err)
	}
	if groups := serverGroups(t, rdb, stream); len(groups) != 1 || groups[0].Name != "billing" {
		t.Errorf("server groups = %+v, want billing", groups)
	}
	// Nothing the provider sent was denied (the ACL log records every denial).
	if denials := server(t).ACLDenials(t, user); len(denials) != 0 {
		t.Errorf("ACL LOG has denials for %s: %v", user, denials)
	}
}

func TestClient_ACLWithoutXgroupNamesMissingPermission(t *testing.T) {
	t.Parallel()
	stream := key(t, "stream")
	user, pw := server(t).ACLUser(t, valkeytest.TagPattern(stream), "+xinfo|groups +type")
	c := newClient(t, valkey.Options{Username: user, Password: pw})
	_, _, err := c.EnsureGroup(context.Background(), stream, "g", valkey.StartNew)
	var refused *valkey.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err = %T %v, want RefusedError", err, err)
	}
	if refused.Code() != "NOPERM" || !strings.Contains(refused.Reply, "xgroup|create") {
		t.Errorf("reply = %q, want NOPERM naming xgroup|create", refused.Reply)
	}
	if n := adminClient(t).Exists(context.Background(), stream).Val(); n != 0 {
		t.Errorf("stream exists after a refused XGROUP CREATE")
	}
}

func TestClient_WrongPasswordIsUnreachableWithoutLeaking(t *testing.T) {
	t.Parallel()
	stream := key(t, "stream")
	user, _ := server(t).ACLUser(t, valkeytest.TagPattern(stream), valkeytest.EnsureGroupACL)
	const secret = "s3cret-wrong-Pa55"
	for _, opts := range []valkey.Options{
		{Username: user, Password: secret},
		{URL: fmt.Sprintf("valkey://%s:%s@%s/0", user, secret, server(t).Addr())},
	} {
		c := newClient(t, opts)
		_, _, err := c.EnsureGroup(context.Background(), stream, "g", valkey.StartNew)
		u := unreachable(t, err, server(t).Addr(), valkey.CauseAuth)
		if strings.Contains(u.Error(), secret) || strings.Contains(c.Addr(), secret) {
			t.Errorf("password leaked: %q / %q", u.Error(), c.Addr())
		}
	}
}

func TestClient_ConnectionErrorsHaveHints(t *testing.T) {
	t.Parallel()
	// A listener that accepts and never answers: the command times out.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	closed, _ := valkeytest.FreePort()
	for name, tc := range map[string]struct {
		opts  valkey.Options
		addr  string
		cause valkey.Cause
	}{
		"refused":      {valkey.Options{URL: fmt.Sprintf("valkey://127.0.0.1:%d", closed)}, fmt.Sprintf("127.0.0.1:%d", closed), valkey.CauseRefused},
		"timeout":      {valkey.Options{URL: "valkey://" + silent.Addr().String(), CommandTimeout: 200 * time.Millisecond}, silent.Addr().String(), valkey.CauseTimeout},
		"dns":          {valkey.Options{URL: "valkey://no-such-host.invalid:6379", DialTimeout: time.Second}, "no-such-host.invalid:6379", valkey.CauseDNS},
		"tls to plain": {valkey.Options{URL: "valkeys://" + server(t).Addr(), TLS: &valkey.TLSOptions{InsecureSkipVerify: true}, DialTimeout: 300 * time.Millisecond}, server(t).Addr(), valkey.CauseTimeout},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc.opts.MaxRetries = new(0)
			start := time.Now()
			_, _, err := newClient(t, tc.opts).EnsureGroup(context.Background(), "k", "g", valkey.StartNew)
			expectUnreachable(t, err, tc.addr, tc.cause)
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v; the timeouts were not applied", d)
			}
		})
	}
}

func TestClient_DBSelectsDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stream := key(t, "stream")
	three := 3
	c := newClient(t, valkey.Options{URL: "valkey://" + server(t).Addr() + "/5", DB: &three}) // attribute beats the URL's /5
	if _, _, err := c.EnsureGroup(ctx, stream, "g", valkey.StartNew); err != nil {
		t.Fatal(err)
	}
	for db, want := range map[int]int64{0: 0, 5: 0, 3: 1} {
		rdb := redis.NewClient(&redis.Options{Addr: server(t).Addr(), DB: db, Protocol: 2, DisableIdentity: true})
		if n := rdb.Exists(ctx, stream).Val(); n != want {
			t.Errorf("EXISTS in db %d = %d, want %d", db, n, want)
		}
		rdb.Close()
	}
}

// standaloneOptions are the go-redis options a standalone client is built with.
func standaloneOptions(t *testing.T, opts valkey.Options) *redis.Options {
	t.Helper()
	rdb, ok := newClient(t, opts).Universal().(*redis.Client)
	if !ok {
		t.Fatalf("a standalone client is a %T, want *redis.Client", newClient(t, opts).Universal())
	}
	return rdb.Options()
}

func TestClient_DefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	def := standaloneOptions(t, valkey.Options{})
	if def.DialTimeout != valkey.DefaultDialTimeout || def.ReadTimeout != valkey.DefaultCommandTimeout ||
		def.WriteTimeout != valkey.DefaultCommandTimeout || def.MaxRetries != valkey.DefaultMaxRetries || def.DB != 0 {
		t.Errorf("defaults: dial %v read %v write %v retries %d db %d", def.DialTimeout, def.ReadTimeout, def.WriteTimeout, def.MaxRetries, def.DB)
	}
	if def.Protocol != 2 || !def.DisableIdentity {
		t.Errorf("protocol %d identity-disabled %v, want RESP2 without CLIENT SETINFO", def.Protocol, def.DisableIdentity)
	}
	// MaxRetries 0 means none; go-redis stores that as 0 too (it reads the -1 it is given as none).
	set := standaloneOptions(t, valkey.Options{DialTimeout: time.Second, CommandTimeout: 2 * time.Second, MaxRetries: new(0)})
	if set.DialTimeout != time.Second || set.ReadTimeout != 2*time.Second || set.WriteTimeout != 2*time.Second || set.MaxRetries != 0 {
		t.Errorf("overrides: dial %v read %v write %v retries %d", set.DialTimeout, set.ReadTimeout, set.WriteTimeout, set.MaxRetries)
	}
}

func TestNewClient_AddrNeverHasPassword(t *testing.T) {
	t.Parallel()
	for _, opts := range []valkey.Options{
		{URL: "valkey://user:hunter2@127.0.0.1:6379/0"},
		{ClusterAddrs: []string{"127.0.0.1:7000", "127.0.0.1:7001"}, Password: "hunter2"},
		{Sentinel: &valkey.SentinelOptions{MasterName: "m", Addrs: []string{"127.0.0.1:26379"}, Password: "hunter2"}, Password: "hunter2"},
	} {
		c, err := valkey.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(c.Addr(), "hunter2") || !strings.Contains(c.Addr(), "127.0.0.1:") {
			t.Errorf("Addr() = %q", c.Addr())
		}
	}
	zero := 0
	if _, err := valkey.NewClient(valkey.Options{ClusterAddrs: []string{"127.0.0.1:7000"}, DB: &zero}); err != nil {
		t.Errorf("db 0 with a cluster: %v", err)
	}
}

// TestNewClient_RefusesOptionsItCannotHonour: each refusal names the Options field at fault,
// so that no setting is silently dropped.
func TestNewClient_RefusesOptionsItCannotHonour(t *testing.T) {
	t.Parallel()
	cluster := []string{"127.0.0.1:7000"}
	sentinel := &valkey.SentinelOptions{MasterName: "m", Addrs: []string{"127.0.0.1:26379"}}
	for field, opts := range map[string]valkey.Options{
		"Sentinel":            {ClusterAddrs: cluster, Sentinel: sentinel},
		"ClusterAddrs":        {ClusterAddrs: []string{"no-port"}},
		"Sentinel.MasterName": {Sentinel: &valkey.SentinelOptions{Addrs: sentinel.Addrs}},
		"Sentinel.Addrs":      {Sentinel: &valkey.SentinelOptions{MasterName: "m"}},
	} {
		_, err := valkey.NewClient(opts)
		var oe *valkey.OptionError
		if !errors.As(err, &oe) || oe.Field != field {
			t.Errorf("%s: err = %v, want an OptionError on %s", field, err, field)
		}
	}
}

// TestNewClient_ReplicaAckDefaults: EnsureGroup waits for one replica with Sentinel and with a
// cluster unless told otherwise, and for none with a single server.
func TestNewClient_ReplicaAckDefaults(t *testing.T) {
	t.Parallel()
	sentinel := &valkey.SentinelOptions{MasterName: "m", Addrs: []string{"127.0.0.1:26379"}}
	for name, tc := range map[string]struct {
		opts valkey.Options
		acks int
		wait time.Duration
	}{
		"standalone":                    {valkey.Options{}, 0, valkey.DefaultReplicaAckTimeout},
		"sentinel":                      {valkey.Options{Sentinel: sentinel}, valkey.DefaultFailoverReplicaAcks, valkey.DefaultReplicaAckTimeout},
		"sentinel, explicitly none":     {valkey.Options{Sentinel: sentinel, MinReplicaAcks: new(0)}, 0, valkey.DefaultReplicaAckTimeout},
		"standalone, two, with timeout": {valkey.Options{MinReplicaAcks: new(2), ReplicaAckTimeout: time.Minute}, 2, time.Minute},
		"cluster":                       {valkey.Options{ClusterAddrs: []string{"127.0.0.1:7000"}}, valkey.DefaultFailoverReplicaAcks, valkey.DefaultReplicaAckTimeout},
		"cluster, explicitly none":      {valkey.Options{ClusterAddrs: []string{"127.0.0.1:7000"}, MinReplicaAcks: new(0)}, 0, valkey.DefaultReplicaAckTimeout},
		"cluster, database 3, two":      {valkey.Options{ClusterAddrs: []string{"127.0.0.1:7000"}, DB: new(3), MinReplicaAcks: new(2)}, 2, valkey.DefaultReplicaAckTimeout},
	} {
		c, err := valkey.NewClient(tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if acks, wait := valkey.ReplicaAcks(c); acks != tc.acks || wait != tc.wait {
			t.Errorf("%s: waits for %d replicas for %v, want %d for %v", name, acks, wait, tc.acks, tc.wait)
		}
	}
}

// TestClient_HandshakeIsOneHello pins what the documentation says about the handshake: each
// connection opens with one HELLO 2 carrying AUTH (no separate AUTH, no CLIENT SETINFO, no
// SELECT for database 0), and a user with only the minimal ACL may send it: HELLO needs no
// permission.
func TestClient_HandshakeIsOneHello(t *testing.T) {
	t.Parallel()
	s := valkeytest.StartT(t)
	admin := s.Client()
	t.Cleanup(func() { _ = admin.Close() })
	stream := key(t, "stream")
	user, pw := s.ACLUser(t, valkeytest.TagPattern(stream), valkeytest.EnsureGroupACL)
	ctx := context.Background()
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, valkey.Options{URL: s.URL(), Username: user, Password: pw})
	if _, _, err := c.EnsureGroup(ctx, stream, "g", valkey.StartNew); err != nil {
		t.Fatalf("EnsureGroup with the minimal ACL: %v", err)
	}
	for cmd, want := range map[string]int{"hello": 1, "auth": 0, "client|setinfo": 0, "select": 0} {
		if got := valkeytest.CommandCalls(t, admin, cmd); got != want {
			t.Errorf("%s ran %d times, want %d", cmd, got, want)
		}
	}
	if denials := s.ACLDenials(t, user); len(denials) != 0 {
		t.Errorf("the handshake was refused by the ACL: %v", denials)
	}
}
