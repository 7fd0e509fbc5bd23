// Command duroxide-redis inspects and operates the durable workflows a
// duroxide-redis deployment keeps in Redis: list and show instances, read
// their histories, watch queue depths, and start, signal, cancel, delete or
// prune instances.
//
// Install it with
//
//	go install github.com/duroxide-go/duroxide-redis/cmd/duroxide-redis@latest
//
// and run "duroxide-redis help" for the commands, flags and exit codes.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}
