package systemtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// forwardT forwards every TCP connection on a free loopback port to target, byte for byte
// (TLS passes through untouched, as through `ssh -L` or a cloud's port-forward), counting the
// connections, until the test ends.
func forwardT(t *testing.T, target string) (addr string, conns *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	acctest.MustDo(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	conns = &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return ln.Addr().String(), conns
}

// TestCLIManaged_addressMapKeepsTLSVerification: a TLS cluster whose nodes announce host names
// that resolve nowhere, on ports nothing listens on (as ElastiCache's nodes announce their
// private names to a runner outside the VPC), reached only through forwards named by
// cluster.address_map. The certificate names localhost, not the announced names: with
// tls.server_name = "localhost" every create succeeds through the forwards; with no
// server_name the announced name is verified and fails, and a wrong server_name fails too.
// Nothing is written to state by a failed apply.
func TestCLIManaged_addressMapKeepsTLSVerification(t *testing.T) {
	t.Parallel()
	needCLI(t)
	pki := valkeytest.NewPKIT(t)
	cluster := valkeytest.StartClusterT(t, 3, 0, valkeytest.WithTLS(pki, false))
	ctx := context.Background()
	var (
		seeds   []string
		mapping []string
		counts  []*atomic.Int64
	)
	names := map[string]bool{}
	for i, node := range cluster.Nodes {
		fake, err := valkeytest.FreePort()
		acctest.MustDo(t, err)
		host := fmt.Sprintf("node-%d.cache.internal", i)
		forward, n := forwardT(t, node.TLSAddr())
		counts = append(counts, n)
		announced := net.JoinHostPort(host, strconv.Itoa(fake))
		names[announced] = true
		seeds = append(seeds, announced)
		mapping = append(mapping, fmt.Sprintf("%q = %q", announced, forward))
		rdb := node.Client()
		for _, kv := range [][2]string{
			{"cluster-announce-bus-port", strconv.Itoa(node.Port + 10000)},
			{"cluster-announce-port", strconv.Itoa(fake)},
			{"cluster-announce-tls-port", strconv.Itoa(fake)},
			{"cluster-announce-hostname", host},
			{"cluster-preferred-endpoint-type", "hostname"},
		} {
			acctest.MustDo(t, rdb.ConfigSet(ctx, kv[0], kv[1]).Err())
		}
		_ = rdb.Close()
	}
	// Every node's slot map names only the announced names and ports.
	deadline := time.Now().Add(20 * time.Second)
	for ok := false; !ok; {
		ok = true
		for _, node := range cluster.Nodes {
			rdb := node.Client()
			slots, err := rdb.ClusterSlots(ctx).Result() //nolint:staticcheck // the map go-redis reads
			_ = rdb.Close()
			ok = ok && err == nil && len(slots) > 0
			for _, s := range slots {
				for _, n := range s.Nodes {
					ok = ok && names[n.Addr]
				}
			}
		}
		if !ok && time.Now().After(deadline) {
			t.Fatal("the nodes do not announce the names and ports set")
		}
		time.Sleep(100 * time.Millisecond)
	}

	provider := func(serverName string) string {
		tls := fmt.Sprintf("ca_cert_file = %q", pki.CACertFile)
		if serverName != "" {
			tls += fmt.Sprintf(", server_name = %q", serverName)
		}
		return fmt.Sprintf("provider \"valkey\" {\n  min_replica_acks = 0\n  max_retries = 0\n  tls = { %s }\n  cluster = {\n"+
			"    addresses   = [%q]\n    address_map = { %s }\n  }\n}\n", tls, seeds[0], strings.Join(mapping, ", "))
	}
	prefix := valkeytest.Key(t, "emq-%s")
	var groups string
	for i := range 6 { // six hash tags over three masters
		groups += acctest.NamedGroupConfig(fmt.Sprintf("g%d", i), fmt.Sprintf("%s:{s%d}:stream", prefix, i), "billing", "new")
	}

	for _, wrong := range []struct{ name, serverName string }{{"no server_name", ""}, {"a wrong server_name", "wrong.example"}} {
		r := newCLIRun(t, provider(wrong.serverName)+groups)
		apply := r.apply().must(t, false)
		errs := diagtest.Find(apply.diags, tfjson.DiagnosticSeverityError, "Consumer Group Not Created")
		if len(errs) == 0 {
			t.Fatalf("with %s, apply failed without a Consumer Group Not Created error:\n%s", wrong.name, apply.output())
		}
		for _, d := range errs {
			if detail := diagtest.Unwrap(d.Detail); !strings.Contains(detail, "TLS verification of the server's certificate failed") ||
				!strings.Contains(detail, "tls.server_name") {
				t.Errorf("with %s, the error does not say that verification failed and what to set: %s", wrong.name, detail)
			}
		}
		if groups := r.stateGroups(); len(groups) != 0 {
			t.Errorf("with %s, state holds %+v after a failed apply", wrong.name, groups)
		}
	}
	for _, s := range cluster.Nodes {
		if n := valkeytest.CommandCalls(t, acctest.Admin(t, s), "xgroup|create"); n != 0 {
			t.Fatalf("%s ran XGROUP CREATE %d times over connections whose certificate check failed", s.Addr(), n)
		}
	}
	before := make([]int64, len(counts))
	for i, n := range counts {
		before[i] = n.Load()
	}

	r := newCLIRun(t, provider("localhost")+groups)
	noCheckSkipped(t, r.plan().must(t, true))
	noCheckSkipped(t, r.apply().must(t, true))
	noCheckSkipped(t, r.expectEmptyPlan())
	for i := range 6 {
		stream := fmt.Sprintf("%s:{s%d}:stream", prefix, i)
		// The slot map names the announced addresses, so ask every node: the owner has the
		// group, the others answer MOVED.
		held := 0
		for _, s := range cluster.Nodes {
			if valkeytest.CheckGroup(acctest.Admin(t, s), stream, "billing") == nil {
				held++
			}
		}
		if held != 1 {
			t.Errorf("%d nodes hold group billing of %s, want its owner", held, stream)
		}
	}
	for i, n := range counts {
		if n.Load() == before[i] {
			t.Errorf("no connection went through the forward of node %d: the map was not used", i)
		}
	}
}

// TestCLIExamples_providerBlocksValidate: every provider block of examples/provider/provider.tf
// (the provider page's example, the new settings among them) is valid for the provider as
// built, on the real CLI: a renamed or misspelt setting fails here before the docs show it.
func TestCLIExamples_providerBlocksValidate(t *testing.T) {
	t.Parallel()
	needCLI(t)
	example, err := os.ReadFile("../../examples/provider/provider.tf")
	acctest.MustDo(t, err)
	for _, setting := range []string{"aws_iam", "gcp_iam", "proxy", "address_map", "server_name", "cert_file"} {
		if !strings.Contains(string(example), setting+" ") {
			t.Errorf("the example sets no %s", setting)
		}
	}
	// Terraform validates only the provider blocks something uses: a data source uses each
	// (validate reads nothing).
	config := string(example) + "data \"valkey_stream\" \"default\" {\n  key = \"k\"\n}\n"
	aliases := regexp.MustCompile(`(?m)^\s*alias\s*=\s*"([^"]+)"`).FindAllStringSubmatch(string(example), -1)
	for _, a := range aliases {
		config += fmt.Sprintf("data \"valkey_stream\" %q {\n  provider = valkey.%s\n  key      = \"k\"\n}\n", a[1], a[1])
	}
	if blocks := strings.Count(string(example), `provider "valkey" {`); blocks != len(aliases)+1 {
		t.Errorf("the example has %d provider blocks and %d aliases: each block but the default needs one, to be validated", blocks, len(aliases))
	}
	r := newCLIRun(t, config)
	out := read(r, "validate", r.tf.Validate)
	if !out.Valid || out.ErrorCount != 0 {
		t.Errorf("examples/provider/provider.tf does not validate: %+v", out.Diagnostics)
	}
	for _, d := range out.Diagnostics {
		if d.Summary != "Provider development overrides are in effect" {
			t.Errorf("validate says of the example: %s: %s", d.Summary, d.Detail)
		}
	}
}
