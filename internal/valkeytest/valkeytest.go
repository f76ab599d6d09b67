// Package valkeytest starts real valkey-server processes on loopback for tests and stops them.
package valkeytest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one valkey-server process listening on 127.0.0.1.
type Server struct {
	Port    int
	TLSPort int // 0 unless started WithTLS
	Dir     string
	args    []string
	optErr  error
	conf    string // a config file passed first, as valkey-sentinel requires
	bin     string
	cmd     *exec.Cmd
	done    chan struct{}
}

// Option changes how a server is started.
type Option func(*Server)

// WithArgs adds valkey-server arguments, such as "--appendonly", "yes".
func WithArgs(args ...string) Option { return func(s *Server) { s.args = append(s.args, args...) } }

// AddArgs adds arguments to those the server is started with from its next restart on, as
// settings made with CONFIG SET that a restart must keep.
func (s *Server) AddArgs(args ...string) { s.args = append(s.args, args...) }

// WithBinary runs another server binary, such as redis-server for a compatibility check.
func WithBinary(bin string) Option { return func(s *Server) { s.bin = bin } }

// withConfig passes a config file holding body first, as valkey-sentinel requires.
func withConfig(body string) Option {
	return func(s *Server) {
		s.conf = filepath.Join(s.Dir, "server.conf")
		if err := os.WriteFile(s.conf, []byte(body), 0o600); err != nil {
			s.optErr = err
		}
	}
}

// Start launches a server in a fresh temp dir on a free loopback port and waits until it
// answers PING. Persistence is off unless args turn it on.
func Start(opts ...Option) (*Server, error) {
	dir, err := os.MkdirTemp("", "valkeytest-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir}
	for _, o := range opts {
		o(s)
	}
	if s.optErr != nil {
		return nil, s.optErr
	}
	if s.bin == "" {
		if s.bin, err = Binary(); err != nil {
			return nil, err
		}
	}
	var lastErr error
	for range 5 {
		if s.Port, err = FreePort(); err != nil {
			return nil, err
		}
		if lastErr = s.launch(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// FreePort picks a loopback TCP port nobody listens on, at or below 55535 so that a cluster
// bus (port+10000) stays in range.
func FreePort() (int, error) {
	for range 100 {
		port := 20000 + rand.IntN(35000)
		for _, p := range []int{port, port + 10000} {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				port = 0
				break
			}
			_ = l.Close()
		}
		if port != 0 {
			return port, nil
		}
	}
	return 0, errors.New("no free loopback port found")
}

func (s *Server) launch() error {
	args := append([]string{
		"--port", strconv.Itoa(s.Port),
		"--bind", "127.0.0.1",
		"--dir", s.Dir,
		"--logfile", filepath.Join(s.Dir, "server.log"),
		"--daemonize", "no",
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "no",
	}, s.args...)
	if s.conf != "" {
		args = append([]string{s.conf}, args...)
	}
	s.cmd = exec.Command(s.bin, args...)
	s.cmd.SysProcAttr = sysProcAttr()
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.done)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("%s exited at start: %s", s.bin, s.LogTail())
		default:
		}
		if s.ping() == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("%s on port %d did not answer PING within 10s: %s", s.bin, s.Port, s.LogTail())
}

func (s *Server) ping() error {
	conn, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := conn.Read(buf)
	if err != nil {
		return err
	}
	// -NOAUTH also means the server is up and answering.
	if r := string(buf[:n]); !strings.HasPrefix(r, "+PONG") && !strings.HasPrefix(r, "-NOAUTH") {
		return fmt.Errorf("unexpected PING reply %q", r)
	}
	return nil
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// URL is the valkey:// URL of database 0.
func (s *Server) URL() string { return "valkey://" + s.Addr() + "/0" }

// Client returns a new go-redis client for assertions; the caller closes it.
func (s *Server) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true})
}

// Stop kills the process (SIGKILL: tests want an abrupt end, and persistence is off anyway).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Shutdown asks the server to save and exit, for tests that restart with persistence.
func (s *Server) Shutdown(ctx context.Context) {
	c := s.Client()
	defer c.Close()
	_ = c.Shutdown(ctx).Err()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.Stop()
	}
}

// Restart starts the server again on the same port and directory.
func (s *Server) Restart() error { return s.launch() }

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.Stop()
	_ = os.RemoveAll(s.Dir)
}

// LogTail is the end of the server's log, for failure messages.
func (s *Server) LogTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// KeySlots asks the server's CLUSTER KEYSLOT for every key, in one pipeline.
func (s *Server) KeySlots(tb testing.TB, keys []string) []int64 {
	tb.Helper()
	rdb := s.Client()
	defer func() { _ = rdb.Close() }()
	ctx := context.Background()
	cmds := make([]*redis.IntCmd, len(keys))
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.ClusterKeySlot(ctx, k)
		}
		return nil
	}); err != nil {
		tb.Fatalf("CLUSTER KEYSLOT: %v", err)
	}
	slots := make([]int64, len(keys))
	for i, cmd := range cmds {
		slots[i] = cmd.Val()
	}
	return slots
}
