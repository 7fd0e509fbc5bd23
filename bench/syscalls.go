package main

import (
	"os"
	"strconv"
	"strings"
)

// ioSyscalls is the number of read and write system calls process pid
// ("self" for this one) made so far, from Linux's /proc/<pid>/io; ok is
// false where that file cannot be read (another OS, another user's Redis).
// Each unpipelined script call costs a write and a read on both sides, so
// this counts what pipelining saves.
func ioSyscalls(pid string) (n int64, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/io")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if k == "syscr" || k == "syscw" {
			c, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, false
			}
			n += c
		}
	}
	return n, true
}
