//go:build !windows

package valkey

import (
	"errors"
	"syscall"
)

// connRefused tells whether err is the system's "connection refused".
func connRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// connReset tells whether err is the system's "connection reset by peer".
func connReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
