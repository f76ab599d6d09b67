//go:build !unix

package main

import "os"

// reportSignal stands in for SIGUSR1, which Windows does not have: sending it fails there
// (os.Process.Signal delivers only Kill), so rpcrss stops with that error. It measures peak RSS
// from /proc anyway.
var reportSignal = os.Interrupt
