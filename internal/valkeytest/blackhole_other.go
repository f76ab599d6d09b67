//go:build !linux

package valkeytest

import "testing"

// BlackholeT needs Linux's listen backlog behaviour; elsewhere the test skips.
func BlackholeT(tb testing.TB) string {
	tb.Helper()
	tb.Skip("a loopback address whose connects hang is made on Linux only")
	return ""
}
