//go:build !unix

package main

// processCPU is unknown on this platform (0: not reported).
func processCPU() float64 { return 0 }
