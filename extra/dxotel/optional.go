package dxotel

import (
	"context"
	"reflect"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Optional interfaces. A runtime finds a provider's optional interfaces
// (duroxide.OrchestrationAckFetcher and the others listed in optional) by
// type assertion, so the wrapper's dynamic type must implement exactly those
// of the inner provider. Nor can the wrapper honestly emulate a missing one:
// a batch is atomic only when the storage makes it so, a history-free fetch
// would read the history and drop it (so the runtime would read it twice),
// and an emulated ack-and-fetch would only hide from the runtime that it
// saves nothing.
//
// Go gives a type its methods statically, so 2^n sets of n interfaces need
// 2^n types (reflect.StructOf cannot make them at run time: it does not
// promote the methods of embedded interfaces, nor of more than one embedded
// field). What need not double is the source. Each pass-through is generic
// in the type of its methods' first parameter: instantiated with present
// (context.Context) its methods have duroxide's signatures; with absent, a
// distinct type no caller outside this package can name, the same methods
// take a parameter no interface of duroxide's has, so a type assertion to
// that interface fails. wrapped embeds one pass-through per optional
// interface, and the compiler instantiates its 2^n variants from the chain
// of with* steps, one per interface, each choosing one type argument by one
// bit of the mask. The compiled variants still double with each interface
// (each gets its own copy of every promoted method, which is why wrapped
// embeds instrumented rather than *provider); that is the price of exact
// type assertions, and about what the generated types cost before.
//
// Adding an optional interface: write its pass-through (a generic struct{ w
// *provider } as in batch.go, every method taking ctx C first), add its
// interface to optional, a type parameter and the embedded pass-through to
// wrapped and assemble, and one with* step;
// TestEveryOptionalInterfaceOfDuroxideIsPassedThrough fails until then, and
// TestWrapperHasExactlyTheOptionalInterfacesOfTheInnerProvider until the
// order agrees.

// optional lists the optional provider interfaces the wrapper passes
// through, in the order of wrapped's type parameters: bit i of a capability
// mask stands for optional[i].
var optional = [...]reflect.Type{
	reflect.TypeFor[duroxide.OrchestrationAckFetcher](),
	reflect.TypeFor[duroxide.WorkAckFetcher](),
	reflect.TypeFor[duroxide.BatchEnqueuer](),
	reflect.TypeFor[duroxide.LazyHistoryFetcher](),
	reflect.TypeFor[duroxide.CheckedEnqueuer](),
	reflect.TypeFor[duroxide.PendingStartNoter](),
	reflect.TypeFor[duroxide.OrchestrationAckReporter](),
	reflect.TypeFor[duroxide.ScheduleStore](),
	reflect.TypeFor[duroxide.InstancePauser](),
	reflect.TypeFor[duroxide.FlowController](),
}

// present instantiates a pass-through whose interface the inner provider
// implements: its methods take a context.Context, as duroxide's do.
type present = context.Context

// absent instantiates a pass-through whose interface the inner provider
// lacks: a type of its own, so its methods' signatures match no interface of
// duroxide's (nor any a caller outside this package can write).
type absent context.Context

// instrumented is the instrumented provider as every variant of wrapped
// embeds it: an interface, so that the variants get its exported methods
// only, not the helpers of *provider (each promoted method is compiled once
// per variant).
type instrumented interface {
	Provider
	duroxide.StickyRouter
}

// wrapped is the instrumented provider with one pass-through per optional
// interface, each present or absent.
type wrapped[A, B, C, D, E, F, G, H, I, J context.Context] struct {
	instrumented
	orchestrationAckFetch[A]
	workAckFetch[B]
	batchEnqueue[C]
	lazyHistoryFetch[D]
	checkedEnqueue[E]
	pendingStartNote[F]
	orchestrationAckReport[G]
	scheduleStore[H]
	instancePauser[I]
	flowController[J]
}

// assemble is the last step: every type argument chosen.
func assemble[A, B, C, D, E, F, G, H, I, J context.Context](w *provider, _ uint) Provider {
	return &wrapped[A, B, C, D, E, F, G, H, I, J]{w, orchestrationAckFetch[A]{w}, workAckFetch[B]{w}, batchEnqueue[C]{w},
		lazyHistoryFetch[D]{w}, checkedEnqueue[E]{w}, pendingStartNote[F]{w}, orchestrationAckReport[G]{w},
		scheduleStore[H]{w}, instancePauser[I]{w}, flowController[J]{w}}
}

// withCapabilities returns w as a value whose type implements exactly the
// optional interfaces in mask. Step i picks the type argument of the
// pass-through of optional[i]; every step instantiates the next with both.
func withCapabilities(w *provider, mask uint) Provider { return with0(w, mask) }

// step is one step of the chain: it chooses the type arguments still open.
type step func(*provider, uint) Provider

// pick chooses the step for bit i of mask.
func pick(mask uint, i int, ifSet, ifClear step) step {
	if mask&(1<<i) != 0 {
		return ifSet
	}
	return ifClear
}

func with0(w *provider, m uint) Provider { return pick(m, 0, with1[present], with1[absent])(w, m) }
func with1[A context.Context](w *provider, m uint) Provider {
	return pick(m, 1, with2[A, present], with2[A, absent])(w, m)
}
func with2[A, B context.Context](w *provider, m uint) Provider {
	return pick(m, 2, with3[A, B, present], with3[A, B, absent])(w, m)
}
func with3[A, B, C context.Context](w *provider, m uint) Provider {
	return pick(m, 3, with4[A, B, C, present], with4[A, B, C, absent])(w, m)
}
func with4[A, B, C, D context.Context](w *provider, m uint) Provider {
	return pick(m, 4, with5[A, B, C, D, present], with5[A, B, C, D, absent])(w, m)
}
func with5[A, B, C, D, E context.Context](w *provider, m uint) Provider {
	return pick(m, 5, with6[A, B, C, D, E, present], with6[A, B, C, D, E, absent])(w, m)
}
func with6[A, B, C, D, E, F context.Context](w *provider, m uint) Provider {
	return pick(m, 6, with7[A, B, C, D, E, F, present], with7[A, B, C, D, E, F, absent])(w, m)
}
func with7[A, B, C, D, E, F, G context.Context](w *provider, m uint) Provider {
	return pick(m, 7, with8[A, B, C, D, E, F, G, present], with8[A, B, C, D, E, F, G, absent])(w, m)
}
func with8[A, B, C, D, E, F, G, H context.Context](w *provider, m uint) Provider {
	return pick(m, 8, with9[A, B, C, D, E, F, G, H, present], with9[A, B, C, D, E, F, G, H, absent])(w, m)
}
func with9[A, B, C, D, E, F, G, H, I context.Context](w *provider, m uint) Provider {
	return pick(m, 9, assemble[A, B, C, D, E, F, G, H, I, present], assemble[A, B, C, D, E, F, G, H, I, absent])(w, m)
}

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
