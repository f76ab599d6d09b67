// Command rpcrss reproduces, without Terraform, the memory that a terraform-plugin-framework
// provider keeps for every request it has served. It starts a provider process the way
// Terraform does (go-plugin, gRPC, AutoMTLS), sends it N GetMetadata requests from P
// goroutines, and prints the process's peak RSS and its live heap after a forced GC.
//
//	cd bench && go run ./cmd/rpcrss [-n 2000,10000] [-parallel 10] [-subjects plugin-go,framework,framework-released]
//
// The subjects are this same binary started again in a provider role:
//
//   - plugin-go: terraform-plugin-go's tf6server with a minimal tfprotov6.ProviderServer
//     (no framework).
//   - framework: an empty terraform-plugin-framework provider (no resources, no data sources)
//     served by providerserver.Serve, as upstream documents.
//   - framework-released: the same provider served by internal/pluginserver.Serve, which lets the
//     framework drop the contexts of requests that have ended.
//
// Every subject first applies pluginserver.QuietUnlessWanted, as our binaries do. On SIGUSR1 a
// subject runs a GC and writes its heap figures, its goroutine count and, for framework
// subjects, the length of the framework server's contextCancels slice (read by reflection) to
// $RPCRSS_REPORT.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// The handshake Terraform and terraform-plugin-go agree on for protocol 6.
var handshake = plugin.HandshakeConfig{
	ProtocolVersion:  6,
	MagicCookieKey:   "TF_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
}

const (
	envSubject = "RPCRSS_SUBJECT"
	envReport  = "RPCRSS_REPORT"
)

func main() {
	if subject := os.Getenv(envSubject); subject != "" {
		serveSubject(subject)
		return
	}
	var (
		sizes, subjects string
		parallel        int
	)
	flag.StringVar(&sizes, "n", "2000,10000", "comma-separated request counts; each runs in a fresh provider process")
	flag.IntVar(&parallel, "parallel", 10, "concurrent requests, as terraform -parallelism")
	flag.StringVar(&subjects, "subjects", "plugin-go,framework,framework-released", "providers to measure")
	flag.Parse()
	var ns []int
	for s := range strings.SplitSeq(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatalf("bad -n entry %q", s)
		}
		ns = append(ns, n)
	}
	self, err := os.Executable()
	if err != nil {
		fatalf("%v", err)
	}
	fmt.Printf("%d GetMetadata requests per run, %d at a time; one fresh provider process per row\n\n", ns[len(ns)-1], parallel)
	fmt.Println("| subject | requests | peak RSS, MiB | heap in use after GC, MiB | retained per request, KB | framework contexts held | goroutines |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for subject := range strings.SplitSeq(subjects, ",") {
		var prev *measure
		for _, n := range ns {
			m, err := run(self, subject, n, parallel)
			if err != nil {
				fatalf("%s, %d requests: %v", subject, n, err)
			}
			per := "—"
			if prev != nil {
				kb := (float64(m.heapInuse) - float64(prev.heapInuse)) / float64(n-prev.n) / 1000
				per = fmt.Sprintf("%.1f", max(kb, 0)) // GC noise can make a flat heap shrink a little
			}
			held := "—"
			if m.held >= 0 {
				held = strconv.Itoa(m.held)
			}
			fmt.Printf("| %s | %d | %.1f | %.1f | %s | %s | %d |\n", subject, n, float64(m.peakKiB)/1024, float64(m.heapInuse)/(1<<20), per, held, m.goroutines)
			prev = &m
		}
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "rpcrss: "+format+"\n", args...)
	os.Exit(1)
}

type measure struct {
	n          int
	peakKiB    int64
	heapInuse  uint64
	held       int // framework contexts held; -1 when the subject has no framework
	goroutines int
}

// run starts one provider process, sends it n requests and measures it.
func run(self, subject string, n, parallel int) (measure, error) {
	m := measure{n: n}
	report, err := os.CreateTemp("", "rpcrss-*.txt")
	if err != nil {
		return m, err
	}
	_ = report.Close()
	defer func() { _ = os.Remove(report.Name()) }()
	_ = os.Remove(report.Name()) // the subject writes it when asked

	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), envSubject+"="+subject, envReport+"="+report.Name())
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  handshake,
		Plugins:          plugin.PluginSet{"provider": rawPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           hclog.NewNullLogger(),
		SyncStdout:       io.Discard,
		SyncStderr:       os.Stderr,
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		return m, err
	}
	raw, err := rpc.Dispense("provider")
	if err != nil {
		return m, err
	}
	conn, ok := raw.(*grpc.ClientConn)
	if !ok {
		return m, fmt.Errorf("the plugin client dispensed a %T, not a gRPC connection", raw)
	}

	ctx := context.Background()
	var (
		wg       sync.WaitGroup
		next     = make(chan struct{})
		errOnce  sync.Once
		firstErr error
	)
	for range parallel {
		wg.Go(func() {
			for range next {
				var resp emptypb.Empty
				if err := conn.Invoke(ctx, "/tfplugin6.Provider/GetMetadata", &emptypb.Empty{}, &resp); err != nil {
					errOnce.Do(func() { firstErr = err })
				}
			}
		})
	}
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return m, firstErr
	}

	pid := cmd.Process.Pid
	if err := cmd.Process.Signal(reportSignal); err != nil {
		return m, err
	}
	var line []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		if line, err = os.ReadFile(report.Name()); err == nil && strings.HasSuffix(string(line), "\n") {
			break
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("no report from the subject")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := fmt.Sscan(string(line), &m.heapInuse, &m.held, &m.goroutines); err != nil {
		return m, fmt.Errorf("report %q: %w", line, err)
	}
	m.peakKiB, err = vmHWM(pid)
	return m, err
}

// vmHWM is the process's peak resident set size so far, in KiB.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// rawPlugin hands back the gRPC connection itself: requests go out as raw protobuf messages,
// so no Terraform protocol stubs are needed (GetMetadata's request is an empty message).
type rawPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (rawPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }

func (rawPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return conn, nil
}
