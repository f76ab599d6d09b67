//go:build windows

package valkey

import (
	"errors"

	"golang.org/x/sys/windows"
)

// connRefused tells whether err is Winsock's "connection refused". On Windows the syscall
// package's ECONNREFUSED is an invented value that no socket error equals.
func connRefused(err error) bool { return errors.Is(err, windows.WSAECONNREFUSED) }

// connReset tells whether err is Winsock's "connection reset by peer" (ECONNRESET likewise).
func connReset(err error) bool { return errors.Is(err, windows.WSAECONNRESET) }
