// Package rusage reads the peak resident set size of a process that has exited.
package rusage

import "os"

// MaxRSSKiB is the largest resident set of the process of ps, or of any process it waited
// for, in KiB (the kernel's rusage maxrss); 0 where the system does not report it (Windows).
func MaxRSSKiB(ps *os.ProcessState) int64 { return maxRSSKiB(ps) }
