package valkeytest

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// BlackholeT returns a loopback address where a TCP connect hangs until the dialer gives up, as
// one does to a private address seen from outside its network: a socket listening with a
// backlog of zero, whose one queue place is taken by a connection never accepted, so the
// kernel drops every later SYN. It is closed when the test ends.
func BlackholeT(tb testing.TB) string {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		tb.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	inet, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		tb.Fatalf("getsockname of an AF_INET socket gave %T", sa)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(inet.Port))
	queued, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = queued.Close() })
	return addr
}
