//go:build !linux

package valkeytest

import "syscall"

// sysProcAttr is the plain start of other systems, where a server outlives a test binary that
// is killed before its cleanups run (Close stops it in every other case).
func sysProcAttr() *syscall.SysProcAttr { return nil }
