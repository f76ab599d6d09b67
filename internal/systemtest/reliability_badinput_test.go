package systemtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// reliabilityPassword is the password every bad-input and fault run carries, distinctive
// enough that finding it anywhere is a leak.
const reliabilityPassword = "rel-Secr3t-6b1f0c2e9d"

// badInputEnv is what a bad-input case may use: its own stream key (and hash tag), the shared
// server, and how to write the password into its provider block.
type badInputEnv struct {
	srv    *valkeytest.Server
	stream string
	admin  *redis.Client
	// passwordLine is `password = "..."` for acceptance steps, and empty for CLI runs, which
	// pass the password in VALKEY_PASSWORD (Terraform copies provider-block literals into
	// its plan JSON, so only the environment variable keeps it out of every artefact).
	passwordLine string
}

// badInputCase is one bad input: the provider block's body, the group it
// declares (or the import ID it tries), the error it must meet, and the server it must not
// write to.
type badInputCase struct {
	provider            string // body of the provider "valkey" block
	stream, name, start string
	importID            string // import instead of apply
	want                string // regexp the error must match; a space matches any white space
	srv                 *valkeytest.Server
}

// standard is the case's provider: the shared server, as the default user (nopass accepts any
// password), with the password; extra lines add to it.
func (e *badInputEnv) standard(extra ...string) string {
	return fmt.Sprintf("url = %q\n  username = \"default\"\n  %s\n  %s", e.srv.URL(), e.passwordLine, strings.Join(extra, "\n  "))
}

// group is a case that declares a group on the standard provider.
func (e *badInputEnv) group(stream, name, start, want string) badInputCase {
	return badInputCase{provider: e.standard(), stream: stream, name: name, start: start, want: want}
}

// seeded puts a value of another type at the case's stream key first.
func (e *badInputEnv) seeded(t *testing.T, typ string, write func(context.Context, string) error) badInputCase {
	if err := write(context.Background(), e.stream); err != nil {
		t.Fatal(err)
	}
	return e.group(e.stream, "g", "new", `(?s)Consumer Group (Cannot Be|Not) Created.*holds a `+typ+`, not a\s+stream`)
}

var startRefused = `(?s)group_start.*value must be one of:.*"new".*"head"`

// badInputs is the table: every way the issue lists to start a group wrongly.
var badInputs = []struct {
	name  string
	setup func(t *testing.T, e *badInputEnv) badInputCase
}{
	{"group_start $", func(t *testing.T, e *badInputEnv) badInputCase { return e.group(e.stream, "g", "$", startRefused) }},
	{"group_start 0", func(t *testing.T, e *badInputEnv) badInputCase { return e.group(e.stream, "g", "0", startRefused) }},
	{"group_start tail", func(t *testing.T, e *badInputEnv) badInputCase { return e.group(e.stream, "g", "tail", startRefused) }},
	{"group_start empty", func(t *testing.T, e *badInputEnv) badInputCase { return e.group(e.stream, "g", "", startRefused) }},
	{"group_start NEW", func(t *testing.T, e *badInputEnv) badInputCase { return e.group(e.stream, "g", "NEW", startRefused) }},
	{"group_start with space", func(t *testing.T, e *badInputEnv) badInputCase { return e.group(e.stream, "g", "head ", startRefused) }},
	{"empty stream", func(t *testing.T, e *badInputEnv) badInputCase {
		return e.group("", "g", "new", `Attribute stream string length must be at least 1`)
	}},
	{"empty name", func(t *testing.T, e *badInputEnv) badInputCase {
		return e.group(e.stream, "", "new", `Attribute name string length must be at least 1`)
	}},
	{"key holds a string", func(t *testing.T, e *badInputEnv) badInputCase {
		return e.seeded(t, "string", func(ctx context.Context, k string) error { return e.admin.Set(ctx, k, "v", 0).Err() })
	}},
	{"key holds a list", func(t *testing.T, e *badInputEnv) badInputCase {
		return e.seeded(t, "list", func(ctx context.Context, k string) error { return e.admin.RPush(ctx, k, "a", "b").Err() })
	}},
	{"key holds a hash", func(t *testing.T, e *badInputEnv) badInputCase {
		return e.seeded(t, "hash", func(ctx context.Context, k string) error { return e.admin.HSet(ctx, k, "f", "v").Err() })
	}},
	{"key holds a set", func(t *testing.T, e *badInputEnv) badInputCase {
		return e.seeded(t, "set", func(ctx context.Context, k string) error { return e.admin.SAdd(ctx, k, "m").Err() })
	}},
	{"key holds a zset", func(t *testing.T, e *badInputEnv) badInputCase {
		return e.seeded(t, "zset", func(ctx context.Context, k string) error {
			return e.admin.ZAdd(ctx, k, redis.Z{Score: 1, Member: "m"}).Err()
		})
	}},
	{"malformed url scheme", func(t *testing.T, e *badInputEnv) badInputCase {
		c := e.group(e.stream, "g", "new", `(?s)Invalid Valkey URL.*accepted\s+forms:\s+valkey://`)
		c.provider = fmt.Sprintf("url = %q\n  %s", "http://"+acctest.Server(t).Addr(), e.passwordLine)
		return c
	}},
	{"malformed url port", func(t *testing.T, e *badInputEnv) badInputCase {
		c := e.group(e.stream, "g", "new", `(?s)Invalid Valkey URL.*invalid\s+port`)
		c.provider = fmt.Sprintf("url = %q\n  %s", "valkey://default@127.0.0.1:notaport/0", e.passwordLine)
		return c
	}},
	{"wrong password", func(t *testing.T, e *badInputEnv) badInputCase {
		// The user exists with another password; reliabilityPassword is the wrong one.
		user, _ := acctest.Server(t).ACLUser(t, valkeytest.TagPattern(e.stream), "+@all")
		c := e.group(e.stream, "g", "new", `(?s)Consumer Group Not Created.*WRONGPASS.*Authentication\s+failed`)
		c.provider = fmt.Sprintf("url = %q\n  username = %q\n  %s\n  max_retries = 0", acctest.Server(t).URL(), user, e.passwordLine)
		return c
	}},
	{"unknown user", func(t *testing.T, e *badInputEnv) badInputCase {
		c := e.group(e.stream, "g", "new", `(?s)Consumer Group Not Created.*WRONGPASS.*Authentication\s+failed`)
		c.provider = fmt.Sprintf("url = %q\n  username = \"nobody-%d\"\n  %s\n  max_retries = 0", acctest.Server(t).URL(), rand.Uint32(), e.passwordLine)
		return c
	}},
	{"user lacking xgroup", func(t *testing.T, e *badInputEnv) badInputCase {
		user := acctest.Server(t).ACLUserWithPassword(t, reliabilityPassword, valkeytest.TagPattern(e.stream), "+xinfo|groups +type")
		c := e.group(e.stream, "g", "new", `(?s)Consumer Group Not Created.*NOPERM.*lacks\s+the\s+permission`)
		c.provider = fmt.Sprintf("url = %q\n  username = %q\n  %s", acctest.Server(t).URL(), user, e.passwordLine)
		return c
	}},
	{"user lacking every permission", func(t *testing.T, e *badInputEnv) badInputCase {
		user := acctest.Server(t).ACLUserWithPassword(t, reliabilityPassword, valkeytest.TagPattern(e.stream), "-@all")
		c := e.group(e.stream, "g", "new", `(?s)Consumer Group Not Created.*NOPERM.*lacks\s+the\s+permission`)
		c.provider = fmt.Sprintf("url = %q\n  username = %q\n  %s", acctest.Server(t).URL(), user, e.passwordLine)
		return c
	}},
	{"unreachable port", func(t *testing.T, e *badInputEnv) badInputCase {
		port, err := valkeytest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		c := e.group(e.stream, "g", "new", `(?s)Consumer Group Not Created.*`+regexp.QuoteMeta(addr)+`.*Nothing\s+is\s+listening`)
		c.provider = fmt.Sprintf("url = %q\n  %s\n  max_retries = 0\n  dial_timeout = \"1s\"", "valkey://"+addr+"/0", e.passwordLine)
		return c
	}},
	{"tls ca does not match", func(t *testing.T, e *badInputEnv) badInputCase {
		srv, _ := valkeytest.StartTLST(t, false)
		other := valkeytest.NewPKIT(t)
		c := e.group(e.stream, "g", "new", `(?s)Consumer Group Not Created.*`+regexp.QuoteMeta(srv.TLSAddr())+`.*TLS\s+verification`)
		c.provider = fmt.Sprintf("url = %q\n  username = \"default\"\n  %s\n  max_retries = 0\n  tls = {\n    ca_cert = %q\n  }",
			srv.TLSURL(), e.passwordLine, other.CACert)
		c.srv = srv
		return c
	}},
	{"tls ca not pem", func(t *testing.T, e *badInputEnv) badInputCase {
		c := e.group(e.stream, "g", "new", `(?s)Invalid Valkey Connection Settings.*tls\.ca_cert.*holds\s+no\s+PEM\s+certificate`)
		c.provider = e.standard("tls = {\n    ca_cert = \"-----BEGIN CERTIFICATE-----\\nnot base64\\n-----END CERTIFICATE-----\\n\"\n  }")
		return c
	}},
	{"tls cert and key not a pair", func(t *testing.T, e *badInputEnv) badInputCase {
		pki := valkeytest.NewPKIT(t)
		c := e.group(e.stream, "g", "new", `(?s)Invalid Valkey Connection Settings.*tls\.cert.*does\s+not\s+form\s+a\s+key\s+pair`)
		c.provider = e.standard(fmt.Sprintf("tls = {\n    cert_file = %q\n    key = %q\n  }", pki.ClientCertFile, pki.ServerKey))
		return c
	}},
	{"db out of range", func(t *testing.T, e *badInputEnv) badInputCase {
		c := e.group(e.stream, "g", "new", `(?s)Consumer Group Not Created.*DB\s+index\s+is\s+out\s+of\s+range`)
		c.provider = e.standard("db = 16\n  max_retries = 0")
		return c
	}},
	{"db negative", func(t *testing.T, e *badInputEnv) badInputCase {
		c := e.group(e.stream, "g", "new", `(?s)db.*value must be at least 0`)
		c.provider = e.standard("db = -1")
		return c
	}},
	{"tls ca_cert and ca_cert_file", func(t *testing.T, e *badInputEnv) badInputCase {
		c := e.group(e.stream, "g", "new", `(?s)Invalid Attribute Combination.*ca_cert_file`)
		c.provider = e.standard("tls = {\n    ca_cert = \"x\"\n    ca_cert_file = \"/x\"\n  }")
		return c
	}},
	{"tls key and key_file", func(t *testing.T, e *badInputEnv) badInputCase {
		c := e.group(e.stream, "g", "new", `(?s)Invalid Attribute Combination.*key_file`)
		c.provider = e.standard("tls = {\n    key = \"x\"\n    key_file = \"/x\"\n  }")
		return c
	}},
	{"import id without slash", func(t *testing.T, e *badInputEnv) badInputCase {
		c := e.group(e.stream, "g", "new", `(?s)Invalid Import ID.*not of the form <stream>/<name>`)
		c.importID = strings.ReplaceAll(e.stream, "/", "-") + "-g"
		return c
	}},
	{"import of a missing group", func(t *testing.T, e *badInputEnv) badInputCase {
		// The stream exists with another group; the imported one does not.
		if err := e.admin.XGroupCreateMkStream(context.Background(), e.stream, "other", "$").Err(); err != nil {
			t.Fatal(err)
		}
		c := e.group(e.stream, "g", "new", `(?s)Consumer Group Not Found For Import.*has no consumer group "g" on stream`)
		c.importID = e.stream + "/g"
		return c
	}},
}

// config is the case's provider and the resource that uses it.
func (c badInputCase) config() string {
	return fmt.Sprintf(`
provider "valkey" {
  %s
}

resource "valkey_stream_group" "bad" {
  stream      = %q
  name        = %q
  group_start = %q
}
`, c.provider, c.stream, c.name, c.start)
}

// badInputAnchor is state that exists before the bad step and must come out of it unchanged.
// It is Terraform's own terraform_data: the provider under test runs in-process, where every
// provider configuration shares one server, so a second (good) valkey configuration next to
// the bad one would be reconfigured by it.
const badInputAnchor = `
resource "terraform_data" "anchor" {
  input = "before the bad step"
}
`

// serverSnapshot is every key under the stream's hash tag (plus the empty key, which the
// empty-stream case names), each with its DUMP: a stream's DUMP carries its groups, so any
// write, new key or new group changes the snapshot.
func serverSnapshot(rdb *redis.Client, stream string) (map[string]string, error) {
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, strings.NewReplacer("{", "\\{", "}", "\\}").Replace(valkeytest.TagPattern(stream))).Result()
	if err != nil {
		return nil, err
	}
	snap := map[string]string{}
	for _, k := range append(keys, "", stream) {
		dump, err := rdb.Dump(ctx, k).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, err
		}
		snap[k] = dump
	}
	return snap, nil
}

// TestAccReliability_badInput runs every bad input as an acceptance step between two good
// ones: the bad step fails with its error, state is what the first step left (the anchor
// unchanged, nothing else to plan), and no key under the case's hash tag changed on the server.
func TestAccReliability_badInput(t *testing.T) {
	t.Parallel()
	if len(badInputs) < 20 {
		t.Fatalf("the table has %d cases; the issue asks for at least 20", len(badInputs))
	}
	for _, bi := range badInputs {
		t.Run(bi.name, func(t *testing.T) {
			t.Parallel()
			e := &badInputEnv{srv: acctest.Server(t), stream: acctest.StreamKey(t), admin: acctest.Admin(t, acctest.Server(t)), passwordLine: fmt.Sprintf("password = %q", reliabilityPassword)}
			c := bi.setup(t, e)
			srv := c.srv
			if srv == nil {
				srv = acctest.Server(t)
			}
			rdb := acctest.Admin(t, srv)
			anchor := badInputAnchor
			// The anchor's whole state (the empty path) is the same after the failed step.
			sameAnchor := statecheck.CompareValue(compare.ValuesSame())
			var before map[string]string
			bad := resource.TestStep{
				PreConfig: func() {
					var err error
					if before, err = serverSnapshot(rdb, e.stream); err != nil {
						t.Fatal(err)
					}
				},
				Config: anchor + c.config(),
				// Terraform wraps long lines: a space in want matches any run of white space.
				ExpectError: regexp.MustCompile(strings.ReplaceAll(c.want, " ", `\s+`)),
			}
			if c.importID != "" {
				bad.ResourceName, bad.ImportState, bad.ImportStateId = "valkey_stream_group.bad", true, c.importID
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: anchor, ConfigStateChecks: []statecheck.StateCheck{sameAnchor.AddStateValue("terraform_data.anchor", tfjsonpath.Path{})}},
					bad,
					{
						Config: anchor,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectEmptyPlan(),
						}},
						ConfigStateChecks: []statecheck.StateCheck{
							sameAnchor.AddStateValue("terraform_data.anchor", tfjsonpath.Path{}),
							acctest.CheckServer(func() error {
								after, err := serverSnapshot(rdb, e.stream)
								if err != nil {
									return err
								}
								if !maps.Equal(before, after) {
									return fmt.Errorf("the server changed under a failed step: keys before %q, after %q",
										slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
								}
								return nil
							}),
						},
					},
				},
			})
		})
	}
}

// TestCLIReliability_badInputNeverLeaksPassword runs the same table through the real CLI with
// TF_LOG=TRACE and the password in VALKEY_PASSWORD: each case fails with its error there too,
// and neither the TRACE log, nor state, nor plan JSON, nor the CLI's output holds the password.
func TestCLIReliability_badInputNeverLeaksPassword(t *testing.T) {
	t.Parallel()
	for _, bi := range badInputs {
		t.Run(bi.name, func(t *testing.T) {
			t.Parallel()
			e := &badInputEnv{srv: acctest.Server(t), stream: acctest.StreamKey(t), admin: acctest.Admin(t, acctest.Server(t))}
			c := bi.setup(t, e)
			config := c.config()
			if c.importID != "" {
				config += fmt.Sprintf("\nimport {\n  to = valkey_stream_group.bad\n  id = %q\n}\n", c.importID)
			}
			r := newCLIRun(t, config).withPassword(reliabilityPassword)
			runs := []cliResult{r.plan(tfexec.Out(planFile))}
			if runs[0].err == nil {
				_, show := r.showPlan()
				runs = append(runs, show, r.apply(tfexec.DirOrPlan(planFile)).must(t, false))
			}
			failed := runs[len(runs)-1]
			want := regexp.MustCompile(strings.ReplaceAll(c.want, " ", `\s+`))
			matched := false
			for _, d := range failed.diags {
				matched = matched || (d.Severity == tfjson.DiagnosticSeverityError && want.MatchString(d.Summary+"\n"+d.Detail))
			}
			if failed.err == nil || !matched {
				t.Errorf("terraform %s: err %v, no error matching %s; diagnostics: %+v", failed.command, failed.err, c.want, failed.diags)
			}
			if groups := r.stateGroups(); len(groups) != 0 {
				t.Errorf("state holds %+v after the failure", groups)
			}
			r.expectNoSecret(reliabilityPassword, runs...)
		})
	}
}
