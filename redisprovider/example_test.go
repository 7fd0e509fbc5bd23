package redisprovider_test

import (
	"context"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// ExampleNew connects a provider to Redis (an embedded miniredis here; in
// production a URL such as redis://127.0.0.1:6379/0) and runs one turn the
// way duroxide's runtime does: a start message is fetched with the
// instance's lock, and the ack appends history and creates the instance.
func ExampleNew() {
	m, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()

	ctx := context.Background()
	p, err := redisprovider.New(ctx, redisprovider.Options{URL: "redis://" + m.Addr() + "/0", Namespace: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	start := duroxide.StartOrchestration{Instance: "order-1", Orchestration: "Checkout", Input: `"cart-7"`, ExecutionID: duroxide.InitialExecutionID}
	if err := p.EnqueueForOrchestrator(ctx, start, 0); err != nil {
		log.Fatal(err)
	}
	item, err := p.FetchOrchestrationItem(ctx, 0, 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	started := duroxide.NewEvent(1, "order-1", 1, nil, duroxide.OrchestrationStartedEvent{Name: "Checkout", Version: "1.0.0", Input: `"cart-7"`})
	err = p.AckOrchestrationItem(ctx, item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{started},
		Metadata:     duroxide.ExecutionMetadata{OrchestrationName: "Checkout", OrchestrationVersion: "1.0.0"},
	})
	if err != nil {
		log.Fatal(err)
	}

	info, err := p.Admin().GetInstanceInfo(ctx, "order-1")
	if err != nil {
		log.Fatal(err)
	}
	history, err := p.Read(ctx, "order-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(item.Instance, len(item.Messages), "message")
	fmt.Println(info.OrchestrationName, info.Status, len(history), "event")
	// Output:
	// order-1 1 message
	// Checkout Running 1 event
}
