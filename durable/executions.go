package durable

import (
	"container/list"
	"sync"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// maxRememberedExecutions bounds how many instances a runtime remembers the
// execution of. Only instances past their first execution (after a
// ContinueAsNew) that have not ended are kept, so the bound is reached only
// by that many such parents at once on one runtime.
const maxRememberedExecutions = 10_000

// executionIDs is what parentExecution reads: for each instance this
// runtime ran, the execution it last ran, most recently used first. It
// keeps no instance whose answer is the fallback anyway (an instance on its
// first execution) or for which none is needed (one whose execution ended
// for good), and forgets the least recently used beyond its bound; a
// forgotten instance gets the fallback, as one this runtime never ran does
// (duroxide's current_execution_ids, bounded).
type executionIDs struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *rememberedExecution, most recent at the front
	byID  map[string]*list.Element
}

type rememberedExecution struct {
	instance string
	id       uint64
}

func newExecutionIDs(max int) *executionIDs {
	return &executionIDs{max: max, order: list.New(), byID: map[string]*list.Element{}}
}

// remember records the execution a turn of instance ran; ended says the
// turn ended the instance (completed, failed or cancelled).
func (x *executionIDs) remember(instance string, id uint64, ended bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	el, ok := x.byID[instance]
	if ended || id == duroxide.InitialExecutionID {
		if ok {
			x.order.Remove(el)
			delete(x.byID, instance)
		}
		return
	}
	if ok {
		el.Value.(*rememberedExecution).id = id
		x.order.MoveToFront(el)
		return
	}
	x.byID[instance] = x.order.PushFront(&rememberedExecution{instance: instance, id: id})
	if x.order.Len() > x.max {
		oldest := x.order.Back()
		x.order.Remove(oldest)
		delete(x.byID, oldest.Value.(*rememberedExecution).instance)
	}
}

// lookup returns the execution last remembered for instance, else the
// first one (duroxide's get_execution_id_for_instance fallback).
func (x *executionIDs) lookup(instance string) uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	if el, ok := x.byID[instance]; ok {
		x.order.MoveToFront(el)
		return el.Value.(*rememberedExecution).id
	}
	return duroxide.InitialExecutionID
}

// len is how many instances are remembered.
func (x *executionIDs) len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.order.Len()
}
