package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// The fault matrix, CLI half: every entry point of the provider against every way a connection
// fails (faultproxy.Failures, the rows internal/valkey's TestFaultMatrix runs too), on the real
// CLI. Each cell asserts that nothing crashed, the outcome (a plan goes on and says once that
// its check was skipped; apply, refresh, the data sources and a query fail; the function
// works), and
// that the message names the address and the cause in words a user acts on. The full run
// (make ci) runs it on one CLI of the matrix, FAULT_MATRIX_CLI, as a step of its own, and the
// other acceptance lanes skip it by name (go test -skip).

// matrixRow is what one failure looks like to a user: the words of the advice that names its
// cause, and whether reads still work (a replica serves reads; OOM refuses only writes).
type matrixRow struct {
	cause      string // a fragment of the detail that names the cause
	applyCause string // when Create meets it in other words (a lost reply)
	readsWork  bool
	refusal    bool // the server answers and refuses: the plan's skip note is per stream
}

var matrixRows = map[string]matrixRow{
	"refused port":                {cause: "Nothing is listening there"},
	"server never answers":        {cause: "did not answer in time"},
	"wrong password":              {cause: "Authentication failed"},
	"no password":                 {cause: "Authentication failed"},
	"ACL user without permission": {cause: "lacks the permission named in the reply", refusal: true},
	"database the server lacks":   {cause: "no database of the number asked for"},
	"TLS to a plain port":         {cause: "did not answer in time"},
	"plain to a TLS port":         {cause: "if it expects TLS, use valkeys://"},
	"server loading":              {cause: "still loading its dataset", refusal: true},
	"replica (READONLY)":          {cause: "points at a replica", readsWork: true},
	"out of memory (OOM)":         {cause: "out of memory", readsWork: true},
	"connection cut mid-reply":    {cause: "closed the connection", applyCause: "its reply was lost: the connection closed before the reply came"},
	"AWS IAM token refused":       {cause: "refused the AWS IAM token"},
	"no AWS credentials":          {cause: "the AWS credential chain gave no credentials"},
	// The proxy rows name the proxy, never the server, as what to check.
	"SOCKS5 proxy not listening":           {cause: "could not be reached: check that it is running"},
	"SOCKS5 proxy refuses the CONNECT":     {cause: "that the proxy may reach that address"},
	"SOCKS5 proxy rejects its credentials": {cause: "answered but did not connect to"},
}

// matrixCell is one entry point's command against a failure, prepared by run and checked by
// check; it runs on CLIs of version since and later.
type matrixCell struct {
	name    string
	since   string
	run     func(t *testing.T, m *matrixRun)
	command func(m *matrixRun) cliResult
	check   func(t *testing.T, m *matrixRun, res cliResult)
}

// matrixRun is one cell's working directory and failure.
type matrixRun struct {
	*cliRun
	f      faultproxy.Failure
	row    matrixRow
	stream string
	before []byte // terraform.tfstate before the command, where the cell keeps it
}

// provider is the provider block pointing at the failure, with short timeouts and one retry.
func (m *matrixRun) provider() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider \"valkey\" {\n  url = %q\n  dial_timeout = \"1s\"\n  command_timeout = \"1s\"\n  max_retries = 1\n", m.f.URL)
	if m.f.Username != "" {
		fmt.Fprintf(&b, "  username = %q\n", m.f.Username)
	}
	if m.f.TLSInsecure {
		b.WriteString("  tls = { insecure_skip_verify = true }\n")
	}
	if m.f.CACertFile != "" {
		fmt.Fprintf(&b, "  tls = { ca_cert_file = %q }\n", m.f.CACertFile)
	}
	if m.f.Proxy != "" {
		fmt.Fprintf(&b, "  proxy = %q\n", m.f.Proxy)
	}
	if a := m.f.AWSIAM; a != nil {
		fmt.Fprintf(&b, "  aws_iam = {\n    service = %q\n    cache_name = %q\n    region = %q\n  }\n", a.Service, a.CacheName, a.Region)
	}
	b.WriteString("}\n")
	return b.String()
}

// expectNoCrash fails if the provider crashed or panicked in res.
func expectNoCrash(t *testing.T, res cliResult) {
	t.Helper()
	for _, sign := range []string{"plugin crashed", "panic:", "Plugin did not respond"} {
		if bytes.Contains(res.output(), []byte(sign)) {
			t.Fatalf("terraform %s: %q in the output:\n%s", res.command, sign, res.output())
		}
	}
}

// expectFailure fails unless res failed with exactly one error, with summary, naming the
// address and the cause.
func (m *matrixRun) expectFailure(t *testing.T, res cliResult, summary, cause string) {
	t.Helper()
	if res.err == nil {
		t.Fatalf("terraform %s succeeded; want %q", res.command, summary)
	}
	errs := 0
	for _, d := range res.diags {
		if d.Severity != tfjson.DiagnosticSeverityError {
			continue
		}
		errs++
		detail := diagtest.Unwrap(d.Detail)
		if d.Summary != summary || !strings.Contains(detail, m.f.Addr) || !strings.Contains(detail, cause) {
			t.Errorf("error %q: %s\nwant %q naming %s and %q", d.Summary, detail, summary, m.f.Addr, cause)
		}
	}
	if errs != 1 {
		t.Errorf("%d errors; want one: %+v", errs, res.diags)
	}
}

// expectRead checks a read: it works where the server still serves reads (a replica, OOM), and
// otherwise fails with summary, naming the address and the cause. It reports whether the read
// worked.
func (m *matrixRun) expectRead(t *testing.T, res cliResult, summary string) (worked bool) {
	t.Helper()
	if m.row.readsWork {
		if res.err != nil {
			t.Errorf("a read from a server that serves reads failed:\n%s", res.output())
		}
		return true
	}
	m.expectFailure(t, res, summary, m.row.cause)
	return false
}

var matrixCells = []matrixCell{
	{"plan of a create", "1.5", func(t *testing.T, m *matrixRun) {
		m.write(m.provider() + acctest.NamedGroupConfig("test", m.stream, "new-group", "head"))
	}, func(m *matrixRun) cliResult { return m.plan() }, func(t *testing.T, m *matrixRun, res cliResult) {
		if res.err != nil {
			t.Fatalf("plan failed:\n%s", res.output())
		}
		switch {
		case m.row.readsWork: // the plan's preview works: it says what head replays
			diagtest.ExpectWarning(t, res.diags, diagtest.ReplaySummary, 1, "2 entries")
		case m.row.refusal:
			diagtest.ExpectWarning(t, res.diags, diagtest.StreamSkippedSummary, 1, m.f.Addr, m.row.cause)
		default:
			diagtest.ExpectWarning(t, res.diags, diagtest.CheckSkippedSummary, 1, m.f.Addr, m.row.cause)
		}
	}},
	{"apply", "1.5", func(t *testing.T, m *matrixRun) {
		m.write(m.provider() + acctest.NamedGroupConfig("test", m.stream, "new-group", "head"))
	}, func(m *matrixRun) cliResult { return m.apply() }, func(t *testing.T, m *matrixRun, res cliResult) {
		summary, cause := "Consumer Group Not Created", m.row.cause
		if m.row.applyCause != "" {
			summary, cause = "Consumer Group Outcome Unknown", m.row.applyCause
		}
		m.expectFailure(t, res, summary, cause)
		if groups := m.stateGroups(); len(groups) != 0 {
			t.Errorf("state holds %+v after a failed apply", groups)
		}
	}},
	{"refresh", "1.5", func(t *testing.T, m *matrixRun) {
		// Put the group in state from a healthy server, then point the provider at the failure.
		m.write(acctest.ProviderConfig(acctest.Server(t)) + acctest.NamedGroupConfig("test", m.stream, "g", "head"))
		m.apply().must(t, true)
		m.write(m.provider() + acctest.NamedGroupConfig("test", m.stream, "g", "head"))
		m.before = m.readState()
	}, func(m *matrixRun) cliResult { return m.apply(tfexec.RefreshOnly(true)) }, func(t *testing.T, m *matrixRun, res cliResult) {
		if m.expectRead(t, res, "Consumer Group Not Read") {
			return
		}
		if after := m.readState(); !bytes.Equal(after, m.before) {
			t.Errorf("a failed refresh changed terraform.tfstate:\nbefore %s\nafter  %s", m.before, after)
		}
	}},
	{"stream data source", "1.5", func(t *testing.T, m *matrixRun) {
		m.write(m.provider() + acctest.StreamDataSourceConfig(m.stream))
	}, func(m *matrixRun) cliResult { return m.plan() }, func(t *testing.T, m *matrixRun, res cliResult) {
		m.expectRead(t, res, "Stream Not Read")
	}},
	{"group data source", "1.5", func(t *testing.T, m *matrixRun) {
		m.write(m.provider() + acctest.StreamGroupDataSourceConfig(m.stream, "g"))
	}, func(m *matrixRun) cliResult { return m.plan() }, func(t *testing.T, m *matrixRun, res cliResult) {
		m.expectRead(t, res, "Consumer Group Not Read")
	}},
	{"query", "1.14", func(t *testing.T, m *matrixRun) {
		m.write(m.provider())
		m.put("groups.tfquery.hcl", queryConfig("found", fmt.Sprintf("match = %q", m.stream)))
	}, func(m *matrixRun) cliResult { return m.query() }, func(t *testing.T, m *matrixRun, res cliResult) {
		if m.expectRead(t, res, "Consumer Groups Not Listed") && len(res.found) == 0 {
			t.Errorf("query of a server that serves reads found nothing:\n%s", res.output())
		}
	}},
	{"function", "1.8", func(t *testing.T, m *matrixRun) {
		m.write(m.provider() + fmt.Sprintf("output \"slot\" {\n  value = provider::valkey::hash_slot(%q)\n}\n", m.stream))
	}, func(m *matrixRun) cliResult { return m.apply() }, func(t *testing.T, m *matrixRun, res cliResult) {
		if res.err != nil {
			t.Fatalf("the function touches no server, yet the apply failed:\n%s", res.output())
		}
		outputs := read(m.cliRun, "output", func(ctx context.Context) (map[string]tfexec.OutputMeta, error) { return m.tf.Output(ctx) })
		var got int
		if err := json.Unmarshal(outputs["slot"].Value, &got); err != nil {
			t.Fatal(err)
		}
		if want := valkey.HashSlot(m.stream); got != want {
			t.Errorf("hash_slot = %d, want %d", got, want)
		}
	}},
}

func TestCLIReliability_faultMatrix(t *testing.T) {
	t.Parallel()
	needCLI(t)
	cli := cliVersion(t)
	for _, fc := range faultproxy.Failures() {
		row, ok := matrixRows[fc.Name]
		if !ok {
			t.Errorf("failure %q has no row in the matrix", fc.Name)
			continue
		}
		t.Run(fc.Name, func(t *testing.T) {
			t.Parallel()
			stream := acctest.StreamKey(t)
			f := fc.Setup(t, stream)
			for _, cell := range matrixCells {
				t.Run(cell.name, func(t *testing.T) {
					if cli.LessThan(version.Must(version.NewVersion(cell.since))) {
						t.Skipf("CLI version %s is older than %s, which %s needs", cli, cell.since, cell.name)
					}
					m := &matrixRun{cliRun: newCLIRun(t, "").withPassword(f.Password), f: f, row: row, stream: stream}
					for k, v := range f.Env {
						m.env[k] = v
					}
					cell.run(t, m)
					res := cell.command(m)
					expectNoCrash(t, res)
					cell.check(t, m, res)
				})
			}
		})
	}
}
