//go:build unix

package main

import "syscall"

// processCPU is the CPU time this process used so far, in seconds (user +
// system): with client and server sharing the cores, where the time goes
// explains the ceiling.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
