//go:build !linux

package bench

import (
	"os"
	"os/exec"
	"time"
)

func selfCPU() time.Duration { return 0 }

func fdatasync(f *os.File) error { return f.Sync() }

func dieWithParent(*exec.Cmd) {}
