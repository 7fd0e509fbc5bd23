package orch

import (
	crand "crypto/rand"
	"database/sql"
	"maps"
	"math/rand"
	randv2 "math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

const nameTyped = "Typed"

func register(reg *durable.Registry) {
	// A literal registered directly: every rule fires inside it.
	reg.AddOrchestration("Literal", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		_ = time.Now()                     // want `time.Now in orchestration "Literal" is not deterministic on replay: use ctx.UTCNow\(\)`
		_ = time.Since(time.Time{})        // want `time.Since in orchestration "Literal"`
		_ = time.Until(time.Time{})        // want `time.Until in orchestration "Literal"`
		time.Sleep(time.Second)            // want `time.Sleep .* use a durable timer: ctx.Timer`
		<-time.After(time.Second)          // want `time.After .* durable timer` `channel receive .* wait on durable futures`
		_ = time.Tick(time.Second)         // want `time.Tick .* durable timers`
		_ = time.NewTimer(time.Second)     // want `time.NewTimer .* durable timer`
		_ = rand.Intn(10)                  // want `math/rand.Intn .* ctx.NewGUID\(\)`
		_ = randv2.IntN(10)                // want `math/rand/v2.IntN .* ctx.NewGUID\(\)`
		_, _ = crand.Read(make([]byte, 8)) // want `crypto/rand.Read .* ctx.NewGUID\(\)`
		go func() {}()                     // want `go statement .* use ctx.Go`
		ch := make(chan int, 1)
		ch <- 1        // want `channel send`
		_ = <-ch       // want `channel receive`
		for range ch { // want `ranging over a channel`
		}
		select { // want `select statement .* use ctx.Select`
		case v := <-ch:
			_ = v
		case ch <- 2:
		case <-time.After(time.Minute): // want `time.After`
		}
		m := map[string]int{}
		for k := range m { // want `ranging over a map .*slices.Sorted`
			_ = k
		}
		for k := range ctx.Values() { // want `ranging over a map`
			_ = k
		}
		for k := range maps.Keys(m) { // want `ranging over maps.Keys`
			_ = k
		}
		_, _ = os.ReadFile("x")     // want `os.ReadFile .* do I/O in an activity`
		_, _ = http.Get("http://x") // want `net/http.Get .* activity`
		var c http.Client
		_, _ = c.Get("http://x")  // want `\*net/http.Client.Get .* activity`
		_, _ = sql.Open("d", "s") // want `database/sql.Open .* activity`
		now := time.Now           // want `time.Now .* ctx.UTCNow`
		_ = now
		return "", nil
	})

	reg.MustAddOrchestration(nameTyped, durable.Orchestration(typed))
	reg.MustAddOrchestrationVersion("Versioned", "2.0.0", durable.Orchestration[string, string](versioned))
	_ = reg.AddOrchestrationVersion("Raw", "1.0.0", raw)
	reg.MustAddOrchestration("Method", (&service{}).run)

	// Activities and ordinary functions may do anything.
	reg.MustAddActivity("Fetch", func(ctx *durable.ActivityContext, in string) (string, error) {
		time.Sleep(time.Second)
		_, err := http.Get(in)
		return time.Now().String(), err
	})
	reg.MustAddActivity("Typed", durable.Activity(activity))
}

func typed(ctx *durable.OrchestrationContext, in int) (int, error) {
	_ = time.Now() // want `time.Now in orchestration "Typed"`
	helper()
	return in, nil
}

// helper is reached from typed; so is deeper, through it.
func helper() {
	_ = rand.Int() // want `math/rand.Int in helper \(called from orchestration "Typed"\)`
	deeper()
	helper() // recursion must not loop
}

func deeper() {
	go deeper() // want `go statement in deeper \(called from orchestration "Typed"\)`
}

func versioned(ctx *durable.OrchestrationContext, in string) (string, error) {
	_, _ = os.Getwd() // want `os.Getwd in orchestration "Versioned"`
	return in, nil
}

func raw(ctx *durable.OrchestrationContext, in string) (string, error) {
	_ = time.Now() // want `time.Now in orchestration "Raw"`
	total := 0
	//durablelint:ignore a sum does not depend on the order
	for _, v := range map[string]int{"a": 1} {
		total += v
	}
	_ = time.Now() //durablelint:ignore only logged
	return in, nil
}

type service struct{}

func (s *service) run(ctx *durable.OrchestrationContext, in string) (string, error) {
	s.step() // followed as a same-package method
	return in, nil
}

func (s *service) step() {
	_ = time.Now() // want `time.Now in service.step \(called from orchestration "Method"\)`
}

//durable:orchestration
func directive(ctx *durable.OrchestrationContext, in string) (string, error) {
	_ = time.Now() // want `time.Now in orchestration "directive"`
	return in, nil
}

// good is an orchestration that uses only the deterministic replacements.
//
//durable:orchestration
func good(ctx *durable.OrchestrationContext, in string) (string, error) {
	now, _ := ctx.UTCNow().Get()
	_ = now.Add(time.Hour).Sub(now) // time.Time methods and durations are fine
	id, _ := ctx.NewGUID().Get()
	_, _ = ctx.Timer(time.Second).Get()
	f := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) { return id, nil })
	_, _ = f.Get()
	m := ctx.Values()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		_ = k
	}
	keys := []string{"b", "a"}
	sort.Strings(keys)
	for range keys {
	}
	return in, nil
}

func activity(ctx *durable.ActivityContext, in int) (int, error) {
	_ = time.Now()
	_ = rand.Int()
	go func() {}()
	return in, nil
}

// notAnOrchestration is never registered: nothing is reported.
func notAnOrchestration() {
	_ = time.Now()
	for range map[int]int{} {
	}
	ch := make(chan int)
	go func() { ch <- 1 }()
	<-ch
}
