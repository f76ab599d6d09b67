//go:build !unix

package rusage

import "os"

// maxRSSKiB is 0: Windows reports a process's peak working set only through a handle that
// os.Process has closed by the time it has exited.
func maxRSSKiB(*os.ProcessState) int64 { return 0 }
