package redisprovider

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Provider is a duroxide.Provider and duroxide.ProviderAdmin on Redis, over
// a namespace of P partitions (P = 1 unless the namespace was created with
// more), each a complete single-slot layout under its own hash tag, so a
// namespace of several uses every shard of a Redis Cluster (see
// dxredis.PartitionTags). It is safe for concurrent use.
//
// An instance lives in the partition of its root instance's id
// (dxredis.PartitionOf), so a turn, its activities and its automatically
// named sub-orchestrations stay in one slot and every turn is still one
// script. Messages a turn sends to another partition's instances go through
// its partition's outbox and a relay (relay.go); the client's calls write to
// the target partition directly. Fetches long-poll every partition at once
// and take work from one; an ack-and-fetch fetches from the acked item's
// partition a few times in a row, then rotates, so no partition waits on
// another's stream of work. Management calls read and write every partition
// (per partition atomic; a deletion that spans partitions is not).
//
// Lock tokens name their partition ("<partition>/<streak>/<token>"). A
// namespace of one partition stores what providers before partitions
// stored, under the namespace's own tag.
type Provider struct {
	base  *partition   // the namespace's own tag: its layout record, the clients
	parts []*partition // one per partition, sharing base's clients
	rr    atomic.Uint64
	set   *pollSet // the fetch classes' demands over parts
	relay *relay

	closeOnce sync.Once
}

var (
	_ duroxide.Provider                = (*Provider)(nil)
	_ duroxide.ProviderAdmin           = (*Provider)(nil)
	_ duroxide.OrchestrationAckFetcher = (*Provider)(nil)
	_ duroxide.WorkAckFetcher          = (*Provider)(nil)
	_ duroxide.LazyHistoryFetcher      = (*Provider)(nil)
	_ duroxide.BatchEnqueuer           = (*Provider)(nil)
	_ duroxide.StickyRouter            = (*Provider)(nil)
	_ duroxide.InstanceLister          = (*Provider)(nil)
)

// Partitioned is the name Provider had while it was a second type beside a
// provider of one partition.
//
// Deprecated: use Provider; New opens a namespace of any partition count.
type Partitioned = Provider

// NewPartitioned is New.
//
// Deprecated: use New, which opens a namespace of any partition count.
func NewPartitioned(ctx context.Context, opts Options) (*Provider, error) { return New(ctx, opts) }

// maxStreak is how many ack-and-fetches in a row take their next item from
// the acked item's partition before one fetches across all partitions.
const maxStreak = 8

// New connects to Redis, checks that it answers, loads every script and
// opens the namespace of opts with every partition it has, creating it with
// opts.Partitions partitions (default 1) when it is new. Asking for another
// count than an existing namespace has is an ErrInvalidInput error: the
// count is fixed at creation.
func New(ctx context.Context, opts Options) (*Provider, error) {
	const op = "new"
	if opts.Partitions < 0 || opts.Partitions > dxredis.MaxPartitions {
		return nil, invalid(op, "Partitions %d is outside 0..%d", opts.Partitions, dxredis.MaxPartitions)
	}
	if opts.OpenOnly && opts.Partitions > 0 {
		return nil, invalid(op, "Partitions %d with OpenOnly: creating a namespace is a write; set one or the other", opts.Partitions)
	}
	base, err := open(ctx, opts)
	if err != nil {
		return nil, err
	}
	n, err := base.namespacePartitions(ctx, opts.Partitions, opts.OpenOnly)
	if err != nil {
		base.Close()
		return nil, err
	}
	if opts.Partitions != 0 && n != opts.Partitions {
		base.Close()
		return nil, invalid(op, "namespace %q has %d partitions, Options.Partitions asks for %d: the count is fixed when a namespace is created", base.namespace, n, opts.Partitions)
	}
	pp := &Provider{base: base}
	if n == 1 {
		pp.parts = []*partition{base}
	} else {
		for _, tag := range dxredis.PartitionTags(base.namespace, n) {
			pp.parts = append(pp.parts, base.sibling(dxredis.NewKeys(tag)))
		}
	}
	pp.set = newPollSet(pp.parts)
	pp.relay = newRelay(pp)
	return pp, nil
}

// namespacePartitions is the namespace's partition count. A namespace with
// a layout record is read without a write, so tools open it on a read-only
// replica too; one without is recorded by openNamespace unless openOnly,
// and a replica, which refuses that write, reads it as the one partition a
// namespace from before layout records has.
func (p *partition) namespacePartitions(ctx context.Context, want int, openOnly bool) (int, error) {
	if n, err := p.storedPartitions(ctx); err != nil || n > 0 {
		return n, err
	}
	if openOnly {
		return 1, nil
	}
	n, err := p.openNamespace(ctx, want)
	var reply redis.Error
	if errors.As(err, &reply) && readOnlyReplica(reply) {
		return 1, nil
	}
	return n, err
}

// openNamespace runs lua/open_namespace.lua: the namespace's partition
// count, recorded as want (at least 1) when the namespace is new.
func (p *partition) openNamespace(ctx context.Context, want int) (int, error) {
	var a args
	a.int(max(want, 1))
	res, err := p.run(ctx, "open_namespace", scriptOpenNamespace, a)
	if err != nil {
		return 0, err
	}
	n, ok := res.(int64)
	if !ok || n < 1 {
		return 0, duroxide.Permanent("open_namespace", "namespace layout record holds no partition count")
	}
	return int(n), nil
}

// storedPartitions reads the namespace's partition count without recording
// one: 0 for a namespace with no record.
func (p *partition) storedPartitions(ctx context.Context) (int, error) {
	s, err := p.rdb.HGet(ctx, p.keys.Meta(), "partitions").Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fail("new", err)
	}
	return strconv.Atoi(s)
}

// sibling returns a provider of another tag of p's namespace: same clients
// and scripts, its own keys and pollers. Closing it closes only its pollers.
func (p *partition) sibling(keys dxredis.Keys) *partition {
	s := &partition{
		rdb: p.rdb, pipe: p.pipe, blocking: p.blocking,
		namespace: p.namespace, keys: keys, lockTimeout: p.lockTimeout, log: p.log,
		scripts: p.scripts, funcs: p.funcs, blockingPoolSize: p.blockingPoolSize,
		closed: make(chan struct{}),
	}
	s.hub = newHub(s)
	return s
}

// Keys returns the key schema of the namespace's own tag, which holds its
// layout record and, with one partition, everything. An instance's keys are
// those of its partition: PartitionKeys(PartitionOf(instance)).
func (pp *Provider) Keys() dxredis.Keys { return pp.base.keys }

// Partitions returns the namespace's partition count.
func (pp *Provider) Partitions() int { return len(pp.parts) }

// PartitionKeys returns the key schema of partition i (0 <= i <
// Partitions()), for tools that read one partition's keys.
func (pp *Provider) PartitionKeys(i int) dxredis.Keys { return pp.parts[i].keys }

// PartitionAdmins returns each partition's management calls, in partition
// order, for tools that report per partition (dxotel's gauges, the CLI's
// stats).
func (pp *Provider) PartitionAdmins() []duroxide.ProviderAdmin {
	out := make([]duroxide.ProviderAdmin, len(pp.parts))
	for i, p := range pp.parts {
		out[i] = p
	}
	return out
}

// PartitionOf returns the partition that holds instance.
func (pp *Provider) PartitionOf(instance string) int {
	return dxredis.PartitionOf(instance, len(pp.parts))
}

// of returns the provider of instance's partition.
func (pp *Provider) of(instance string) *partition { return pp.parts[pp.PartitionOf(instance)] }

// Name identifies the provider in logs.
func (pp *Provider) Name() string { return "redis" }

// Version is the provider's version.
func (pp *Provider) Version() string { return ProviderVersion }

// Admin returns the provider itself: it implements every management method.
func (pp *Provider) Admin() duroxide.ProviderAdmin { return pp }

// SupportsStickyRouting reports that sticky routes are honoured (within
// each partition).
func (pp *Provider) SupportsStickyRouting() bool { return true }

// FunctionLibraryName is the function library's name (see Provider).
func (pp *Provider) FunctionLibraryName() string { return pp.base.FunctionLibraryName() }

// UsesFunctions reports whether scripts run as Redis functions.
func (pp *Provider) UsesFunctions() bool { return pp.base.UsesFunctions() }

// WakeFetchers makes every fetch of every partition run its script again
// at once (see Provider.WakeFetchers).
func (pp *Provider) WakeFetchers() {
	for _, p := range pp.parts {
		p.WakeFetchers()
	}
}

// Close stops the relay, every partition's pollers and due loop, and closes
// the clients New created.
func (pp *Provider) Close() error {
	var err error
	pp.closeOnce.Do(func() {
		pp.relay.stop()
		for _, p := range pp.parts {
			if p != pp.base {
				err = errors.Join(err, p.Close())
			}
		}
		err = errors.Join(err, pp.base.Close())
	})
	return err
}

// Lock tokens.

// wrapToken names the partition (and the ack-and-fetch streak) of a token.
func wrapToken(part, streak int, token string) string {
	return strconv.Itoa(part) + "/" + strconv.Itoa(streak) + "/" + token
}

// unwrapToken splits a token made by wrapToken. A token that is not one is
// given, unchanged, to partition 0, which reports it unknown as any unknown
// token is reported.
func (pp *Provider) unwrapToken(token string) (p *partition, part, streak int, inner string) {
	ps, rest, ok1 := strings.Cut(token, "/")
	ss, inner, ok2 := strings.Cut(rest, "/")
	part, err1 := strconv.Atoi(ps)
	streak, err2 := strconv.Atoi(ss)
	// only the form wrapToken writes: "00/0/x" or "+0/0/x" is another
	// string than the token issued, and no token of a live lock
	canonical := err1 == nil && err2 == nil && strconv.Itoa(part) == ps && strconv.Itoa(streak) == ss
	if !ok1 || !ok2 || !canonical || part < 0 || part >= len(pp.parts) {
		return pp.parts[0], 0, 0, token
	}
	return pp.parts[part], part, streak, inner
}

// withOrchToken gives a fetched item its partition's token.
func withOrchToken(item *duroxide.OrchestrationItem, part, streak int) *duroxide.OrchestrationItem {
	if item != nil {
		item.LockToken = wrapToken(part, streak, item.LockToken)
	}
	return item
}

// withWorkToken gives a fetched item its partition's token.
func withWorkToken(item *duroxide.LockedWorkItem, part, streak int) *duroxide.LockedWorkItem {
	if item != nil {
		item.LockToken = wrapToken(part, streak, item.LockToken)
	}
	return item
}

// Instance-scoped calls go to the instance's partition.

// Read returns the current execution's history.
func (pp *Provider) Read(ctx context.Context, instance string) ([]duroxide.Event, error) {
	return pp.of(instance).Read(ctx, instance)
}

// ReadWithExecution returns one execution's history.
func (pp *Provider) ReadWithExecution(ctx context.Context, instance string, executionID uint64) ([]duroxide.Event, error) {
	return pp.of(instance).ReadWithExecution(ctx, instance, executionID)
}

// AppendWithExecution appends events to an execution outside a turn.
func (pp *Provider) AppendWithExecution(ctx context.Context, instance string, executionID uint64, events []duroxide.Event) error {
	return pp.of(instance).AppendWithExecution(ctx, instance, executionID, events)
}

// GetCustomStatus returns the custom status if newer than lastSeenVersion.
func (pp *Provider) GetCustomStatus(ctx context.Context, instance string, lastSeenVersion uint64) (*duroxide.CustomStatus, error) {
	return pp.of(instance).GetCustomStatus(ctx, instance, lastSeenVersion)
}

// GetKVValue reads one key of an instance's KV store.
func (pp *Provider) GetKVValue(ctx context.Context, instance, key string) (string, bool, error) {
	return pp.of(instance).GetKVValue(ctx, instance, key)
}

// GetKVAllValues reads an instance's KV store.
func (pp *Provider) GetKVAllValues(ctx context.Context, instance string) (map[string]string, error) {
	return pp.of(instance).GetKVAllValues(ctx, instance)
}

// GetInstanceStats returns an instance's counters.
func (pp *Provider) GetInstanceStats(ctx context.Context, instance string) (*duroxide.InstanceStats, error) {
	return pp.of(instance).GetInstanceStats(ctx, instance)
}

// EnqueueForOrchestrator adds a message to its instance's partition.
func (pp *Provider) EnqueueForOrchestrator(ctx context.Context, item duroxide.WorkItem, delay time.Duration) error {
	return pp.of(itemInstance(item)).EnqueueForOrchestrator(ctx, item, delay)
}

// EnqueueForWorker adds an activity to its instance's partition.
func (pp *Provider) EnqueueForWorker(ctx context.Context, item duroxide.WorkItem) error {
	return pp.of(itemInstance(item)).EnqueueForWorker(ctx, item)
}

// itemInstance is item's instance; "" for a nil item, which the partition
// rejects as any provider does.
func itemInstance(item duroxide.WorkItem) string {
	if item == nil {
		return ""
	}
	if v := reflect.ValueOf(item); v.Kind() == reflect.Pointer && v.IsNil() {
		return ""
	}
	return item.InstanceID()
}

// EnqueueForOrchestratorBatch enqueues items, one call per partition they
// address, in order within each partition.
func (pp *Provider) EnqueueForOrchestratorBatch(ctx context.Context, items []duroxide.WorkItem, delay time.Duration) error {
	return pp.batches(items, func(p *partition, part []duroxide.WorkItem) error {
		return p.EnqueueForOrchestratorBatch(ctx, part, delay)
	})
}

// EnqueueForWorkerBatch enqueues activities, one call per partition.
func (pp *Provider) EnqueueForWorkerBatch(ctx context.Context, items []duroxide.WorkItem) error {
	return pp.batches(items, func(p *partition, part []duroxide.WorkItem) error {
		return p.EnqueueForWorkerBatch(ctx, part)
	})
}

// batches splits items by partition, keeping their order, and calls do for
// each partition; a batch within one partition is atomic, across them not.
func (pp *Provider) batches(items []duroxide.WorkItem, do func(p *partition, part []duroxide.WorkItem) error) error {
	if len(pp.parts) == 1 {
		return do(pp.parts[0], items)
	}
	by := make(map[int][]duroxide.WorkItem)
	var order []int
	for _, item := range items {
		k := pp.PartitionOf(itemInstance(item))
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], item)
	}
	for _, k := range order {
		if err := do(pp.parts[k], by[k]); err != nil {
			return err
		}
	}
	return nil
}
