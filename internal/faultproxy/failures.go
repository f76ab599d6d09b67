package faultproxy

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/socks5test"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// Failure is one way a connection to the server fails, set up on loopback for one test: the
// mistakes people make (a wrong password, a database the server lacks, TLS to a plain port)
// and the states a server can be in (loading, a replica, out of memory, gone mid-reply). A
// client pointed at URL with Username and Password meets the failure. The fault tests of
// internal/valkey and internal/provider share these, so the two halves of the matrix are the
// same rows.
type Failure struct {
	Name     string
	URL      string // valkey://host:port/db, or valkeys:// for TLS
	Username string
	Password string
	// TLSInsecure asks the client to skip certificate verification (TLS to a plain port: the
	// failure to show is the missing TLS, not an untrusted certificate).
	TLSInsecure bool
	// Addr is the address the client dials, which every error must name.
	Addr string
	// CACertFile is the CA that verifies the server's certificate, for a TLS row.
	CACertFile string
	// Proxy is the SOCKS5 proxy (socks5://[user:password@]host:port) every connection goes
	// through; "" for none.
	Proxy string
	// AWSIAM, when set, makes each connection's password an AWS IAM token signed with the
	// credentials the AWS credential chain finds in Env.
	AWSIAM *AWSIAM
	// Env is the environment the client runs in: the AWS credential chain's variables, each set
	// (to "" where the chain must find nothing). It is the process's environment, so a client
	// in the test's own process cannot take it in a parallel test.
	Env map[string]string
}

// AWSIAM is an AWS IAM row's cache: the provider's aws_iam settings.
type AWSIAM struct{ Service, CacheName, Region string }

// awsEnv is an AWS credential chain that finds static credentials key and secret (none when
// both are "") and nothing else: no profile, no shared files (they are in dir, which holds
// none), no web identity, no container or instance metadata.
func awsEnv(dir, key, secret string) map[string]string {
	return map[string]string{
		"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_ROLE_ARN": "",
	}
}

// FailureCase names a Failure and sets it up. Where there is a server behind the failure, it
// holds stream, seeded before the failure takes effect: two entries (1-1 and 1-2) and the
// group "g" at the head, what the matrix's entry points read.
type FailureCase struct {
	Name  string
	Setup func(t testing.TB, stream string) Failure
}

// seedMatrixStream is the seed of every row: stream with two entries and group "g" at 0.
func seedMatrixStream(t testing.TB, stream string) func(*redis.Client) {
	return func(rdb *redis.Client) {
		valkeytest.XAdd(t, rdb, stream, "1-1", "1-2")
		if err := rdb.XGroupCreate(context.Background(), stream, "g", "0").Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// loadingReply and the data commands the provider sends: a server still loading its dataset
// answers every one of them so (HELLO and SELECT are served while loading).
const loadingReply = "LOADING Valkey is loading the dataset in memory"

var dataCommands = []string{"XGROUP CREATE", "XINFO GROUPS", "XINFO STREAM", "XINFO CONSUMERS", "TYPE", "WAIT", "SCAN"}

// faultEvery is one fault per data command.
func faultEvery(action Action, reply string) []Fault {
	faults := make([]Fault, len(dataCommands))
	for i, c := range dataCommands {
		faults[i] = Fault{Command: c, Action: action, Reply: reply}
	}
	return faults
}

// Failures are the rows of the fault matrix.
func Failures() []FailureCase {
	const password = "fault-matrix-Pa55"
	seeded := func(t testing.TB, s *valkeytest.Server, pass string, seed func(*redis.Client)) {
		t.Helper()
		if seed == nil {
			return
		}
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: pass, Protocol: 2, DisableIdentity: true})
		defer func() { _ = rdb.Close() }()
		seed(rdb)
	}
	plain := func(t testing.TB, seed func(*redis.Client), args ...string) *valkeytest.Server {
		s := valkeytest.StartT(t, valkeytest.WithArgs(args...))
		seeded(t, s, "", seed)
		return s
	}
	behindProxy := func(t testing.TB, seed func(*redis.Client), faults []Fault) Failure {
		p := StartProxyT(t, plain(t, seed).Addr(), faults...)
		return Failure{URL: p.URL(), Addr: p.Addr()}
	}
	return []FailureCase{
		{"refused port", func(t testing.TB, _ string) Failure {
			port, err := valkeytest.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			return Failure{URL: "valkey://" + addr + "/0", Addr: addr}
		}},
		{"server never answers", func(t testing.TB, _ string) Failure {
			p := StartProxyT(t, plain(t, nil).Addr(), Fault{Action: Hang})
			return Failure{URL: p.URL(), Addr: p.Addr()}
		}},
		{"wrong password", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			s := valkeytest.StartT(t, valkeytest.WithArgs("--requirepass", password))
			seeded(t, s, password, seed)
			return Failure{URL: s.URL(), Addr: s.Addr(), Password: "not-" + password}
		}},
		{"no password", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			s := valkeytest.StartT(t, valkeytest.WithArgs("--requirepass", password))
			seeded(t, s, password, seed)
			return Failure{URL: s.URL(), Addr: s.Addr()}
		}},
		{"ACL user without permission", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			s := plain(t, seed)
			user, pass := s.ACLUser(t, "*", "-@all")
			return Failure{URL: s.URL(), Addr: s.Addr(), Username: user, Password: pass}
		}},
		{"database the server lacks", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			s := plain(t, seed)
			return Failure{URL: "valkey://" + s.Addr() + "/99", Addr: s.Addr()}
		}},
		{"TLS to a plain port", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			s := plain(t, seed)
			return Failure{URL: "valkeys://" + s.Addr() + "/0", Addr: s.Addr(), TLSInsecure: true}
		}},
		{"plain to a TLS port", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			s := valkeytest.StartT(t, valkeytest.WithTLS(valkeytest.NewPKIT(t), false))
			seeded(t, s, "", seed)
			return Failure{URL: "valkey://" + s.TLSAddr() + "/0", Addr: s.TLSAddr()}
		}},
		{"server loading", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			return behindProxy(t, seed, faultEvery(Answer, loadingReply))
		}},
		{"replica (READONLY)", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			// The replica links after the seed, so its full sync carries the seeded keys.
			replica := valkeytest.StartReplicaT(t, plain(t, seed))
			return Failure{URL: replica.URL(), Addr: replica.Addr()}
		}},
		{"out of memory (OOM)", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			s := plain(t, seed, "--maxmemory-policy", "noeviction")
			rdb := s.Client()
			defer func() { _ = rdb.Close() }()
			if err := rdb.ConfigSet(context.Background(), "maxmemory", "1").Err(); err != nil {
				t.Fatal(err)
			}
			return Failure{URL: s.URL(), Addr: s.Addr()}
		}},
		{"connection cut mid-reply", func(t testing.TB, stream string) Failure {
			seed := seedMatrixStream(t, stream)
			return behindProxy(t, seed, faultEvery(CutReply, ""))
		}},
		{"AWS IAM token refused", func(t testing.TB, stream string) Failure {
			// The user's password is not the token: what a policy, a user id or a region that
			// does not match does on ElastiCache, which answers WRONGPASS.
			f := iamServer(t, seedMatrixStream(t, stream))
			f.Env = awsEnv(t.TempDir(), "AKIDFAULTMATRIX", "fault-matrix-secret")
			return f
		}},
		{"no AWS credentials", func(t testing.TB, stream string) Failure {
			f := iamServer(t, seedMatrixStream(t, stream))
			f.Env = awsEnv(t.TempDir(), "", "")
			return f
		}},
		{"SOCKS5 proxy not listening", func(t testing.TB, stream string) Failure {
			s := plain(t, seedMatrixStream(t, stream))
			port, err := valkeytest.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			return Failure{URL: s.URL(), Addr: s.Addr(), Proxy: fmt.Sprintf("socks5://127.0.0.1:%d", port)}
		}},
		{"SOCKS5 proxy refuses the CONNECT", func(t testing.TB, stream string) Failure {
			s := plain(t, seedMatrixStream(t, stream))
			p := socks5test.StartRefusingT(t, socks5test.ReplyNotAllowed)
			return Failure{URL: s.URL(), Addr: s.Addr(), Proxy: "socks5://" + p.Addr}
		}},
		{"SOCKS5 proxy rejects its credentials", func(t testing.TB, stream string) Failure {
			s := plain(t, seedMatrixStream(t, stream))
			p := socks5test.StartT(t, "runner", "proxy-Pa55")
			return Failure{URL: s.URL(), Addr: s.Addr(), Proxy: "socks5://runner:not-proxy-Pa55@" + p.Addr}
		}},
	}
}

// iamServer is a TLS server with the IAM-enabled user "iam-user", whose password no token
// matches, holding seed; the Failure reaches it with AWS IAM (a serverless cache's token).
func iamServer(t testing.TB, seed func(*redis.Client)) Failure {
	t.Helper()
	pki := valkeytest.NewPKIT(t)
	s := valkeytest.StartT(t, valkeytest.WithTLS(pki, false))
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	seed(rdb)
	if err := rdb.Do(context.Background(), "ACL", "SETUSER", "iam-user", "on", ">not-a-token", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	return Failure{URL: "valkeys://" + s.TLSAddr() + "/0", Addr: s.TLSAddr(), Username: "iam-user", CACertFile: pki.CACertFile,
		AWSIAM: &AWSIAM{Service: "elasticache-serverless", CacheName: "my-cache", Region: "eu-west-1"}}
}
