package duroxide

import "context"

// InstancePageFilter narrows ListInstancesPage; its zero value lists every instance.
type InstancePageFilter struct {
	// Status is the current execution's status (Running, Completed, Failed,
	// ContinuedAsNew); "" = any.
	Status string
	// Orchestration is the exact orchestration name; "" = any.
	Orchestration string
	// IDPrefix keeps the instances whose id starts with it; "" = any.
	IDPrefix string
}

// InstanceLister is an optional extension of ProviderAdmin: one page of instance
// records, newest first, for tools that show a list without reading every id of a large
// deployment (ListInstances returns them all). Callers check for it with a type
// assertion on the ProviderAdmin and fall back to ListInstances / ListInstancesByStatus.
//
// ListInstancesPage returns at most limit records (limit >= 1; a larger limit may be
// capped by the provider) whose instances match filter, ordered by creation time, newest
// first, starting after cursor ("" = from the newest). next is the cursor of the page
// that follows, "" when the listing is complete. A page may hold fewer than limit
// records, even none, with a non-empty next: a provider may bound how many index entries
// one call examines for filters it has no index for. Instances created after the first
// page, or deleted meanwhile, may be missed or skipped, never repeated. A cursor is
// opaque and valid for the same filter only; a malformed one is an ErrInvalidInput
// error, as are limit < 1 and an unknown Status.
type InstanceLister interface {
	ListInstancesPage(ctx context.Context, filter InstancePageFilter, cursor string, limit int) (page []InstanceInfo, next string, err error)
}
