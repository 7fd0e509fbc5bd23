package durabletest_test

import (
	"os"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// myapp stands for the user's package in ReplayMain's block.
var myapp = struct{ Registry func() *durable.Registry }{Registry: newRegistry}

// main holds durable.ReplayMain's block (also in cmd/duroxide-redis/README.md),
// here because durable's own tests hold the package example's main. In a
// test package it is an ordinary function, only compiled: as a program's
// main it reads os.Args and os.Stdin; durable's TestReplayMain runs
// ReplayMain itself.
func main() {
	os.Exit(durable.ReplayMain(myapp.Registry(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

var _ = main
