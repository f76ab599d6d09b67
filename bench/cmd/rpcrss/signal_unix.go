//go:build unix

package main

import "syscall"

// reportSignal asks a subject for its report.
var reportSignal = syscall.SIGUSR1
