package bench

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// selfCPU is this process's user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// dieWithParent makes the kernel kill a child (a broker or driver) if the
// orchestrator dies, so that an interrupted bench leaves no JVM behind.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
