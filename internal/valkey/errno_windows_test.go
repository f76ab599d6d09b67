package valkey

import (
	"testing"

	"golang.org/x/sys/windows"
)

// TestCause_WinsockErrors: on Windows a dial to a port nobody listens on fails with
// WSAECONNREFUSED (10061) and a reset with WSAECONNRESET (10054), which syscall's invented
// ECONNREFUSED and ECONNRESET never equal. Compiled for windows by the cross-compile gate.
func TestCause_WinsockErrors(t *testing.T) {
	t.Parallel()
	checkSocketCauses(t, windows.WSAECONNREFUSED, windows.WSAECONNRESET)
}
