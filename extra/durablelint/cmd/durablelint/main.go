// Command durablelint reports non-deterministic code in durable
// orchestrations. Run it on its own:
//
//	durablelint ./...
//
// or through go vet:
//
//	go vet -vettool=$(which durablelint) ./...
package main

import (
	"github.com/duroxide-go/duroxide-redis/extra/durablelint"
	"golang.org/x/tools/go/analysis/singlechecker"
)

func main() { singlechecker.Main(durablelint.Analyzer) }
