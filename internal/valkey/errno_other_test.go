//go:build !windows

package valkey

import (
	"syscall"
	"testing"
)

// TestCause_SocketErrors: elsewhere than on Windows a refused dial fails with ECONNREFUSED and
// a reset with ECONNRESET.
func TestCause_SocketErrors(t *testing.T) {
	t.Parallel()
	checkSocketCauses(t, syscall.ECONNREFUSED, syscall.ECONNRESET)
}
