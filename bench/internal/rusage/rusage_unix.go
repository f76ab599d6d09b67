//go:build unix

package rusage

import (
	"os"
	"runtime"
	"syscall"
)

func maxRSSKiB(ps *os.ProcessState) int64 {
	u, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(u.Maxrss) / 1024 // bytes there, KiB elsewhere
	}
	return int64(u.Maxrss)
}
