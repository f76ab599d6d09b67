package valkeytest

import "syscall"

// sysProcAttr makes a server die with the test binary (Pdeathsig), so that a test killed by
// its timeout leaves no server behind, and puts it in a process group of its own. Both fields
// exist only on Linux.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
