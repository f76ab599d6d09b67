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
	kib := int64(u.Maxrss) //nolint:unconvert // an int32 on 32-bit systems
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		kib /= 1024 // bytes there
	}
	return kib
}
