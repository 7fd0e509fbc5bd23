// Package durable is a stub of the real package's registration API, enough
// for the analyzer's tests to type-check against.
package durable

import "time"

type OrchestrationContext struct{}
type ActivityContext struct{}

type OrchestrationFunc func(ctx *OrchestrationContext, input string) (string, error)
type ActivityFunc func(ctx *ActivityContext, input string) (string, error)

type Future[T any] struct{}

func (Future[T]) Get() (T, error) { var z T; return z, nil }

func (c *OrchestrationContext) UTCNow() Future[time.Time]            { return Future[time.Time]{} }
func (c *OrchestrationContext) NewGUID() Future[string]              { return Future[string]{} }
func (c *OrchestrationContext) Timer(time.Duration) Future[struct{}] { return Future[struct{}]{} }
func (c *OrchestrationContext) Values() map[string]string            { return nil }
func (c *OrchestrationContext) Go(fn func(ctx *OrchestrationContext) (string, error)) Future[string] {
	return Future[string]{}
}

type Registry struct{}

func NewRegistry() *Registry { return &Registry{} }

func (r *Registry) AddOrchestration(name string, fn OrchestrationFunc) error { return nil }
func (r *Registry) AddOrchestrationVersion(name, version string, fn OrchestrationFunc) error {
	return nil
}
func (r *Registry) AddActivity(name string, fn ActivityFunc) error                   { return nil }
func (r *Registry) MustAddOrchestration(name string, fn OrchestrationFunc) *Registry { return r }
func (r *Registry) MustAddOrchestrationVersion(name, version string, fn OrchestrationFunc) *Registry {
	return r
}
func (r *Registry) MustAddActivity(name string, fn ActivityFunc) *Registry { return r }

func Orchestration[In, Out any](fn func(ctx *OrchestrationContext, in In) (Out, error)) OrchestrationFunc {
	return nil
}
func Activity[In, Out any](fn func(ctx *ActivityContext, in In) (Out, error)) ActivityFunc {
	return nil
}
