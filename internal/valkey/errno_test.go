package valkey

import (
	"net"
	"os"
	"testing"
)

// dialError is a socket error as the net package returns it from a dial or a read.
func dialError(op, syscall string, errno error) error {
	return &net.OpError{Op: op, Net: "tcp", Err: &os.SyscallError{Syscall: syscall, Err: errno}}
}

// checkSocketCauses: the system's own "refused" and "reset" errors give the hints their causes.
// refused and reset are this system's values (errno_*_test.go).
func checkSocketCauses(t *testing.T, refused, reset error) {
	t.Helper()
	if got := (&UnreachableError{Addr: "127.0.0.1:1", Step: "dial", Err: dialError("dial", "connect", refused)}).Cause(); got != CauseRefused {
		t.Errorf("a refused dial (%v) has cause %v; want %v (Nothing is listening there)", refused, got, CauseRefused)
	}
	if got := (&UnreachableError{Addr: "127.0.0.1:1", Step: "PING", Err: dialError("read", "wsarecv", reset)}).Cause(); got != CauseClosed {
		t.Errorf("a reset read (%v) has cause %v; want %v (the server closed the connection)", reset, got, CauseClosed)
	}
}
