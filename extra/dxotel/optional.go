package dxotel

import (
	"reflect"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Optional interfaces. A runtime finds a provider's optional interfaces
// (duroxide.OrchestrationAckFetcher and the others listed in optional) by
// type assertion, and Go cannot give one type a method only when the inner
// provider has it. Nor can the wrapper honestly emulate a missing one: a
// batch is atomic only when the storage makes it so, a history-free fetch
// would read the history and drop it (so the runtime would read it twice),
// and an emulated ack-and-fetch would only hide from the runtime that it
// saves nothing. So WrapProvider returns, for each set of optional
// interfaces, a type that embeds the instrumented provider and exactly the
// pass-throughs of that set: withCapabilities, generated from the list in
// gen_optional.go, holds one such type per subset.

//go:generate go run gen_optional.go

// capabilities is the mask of the optional interfaces p implements: bit i
// stands for optional[i].
func capabilities(p duroxide.Provider) uint {
	t := reflect.TypeOf(p)
	var mask uint
	for i, o := range optional {
		if t.Implements(o) {
			mask |= 1 << i
		}
	}
	return mask
}
