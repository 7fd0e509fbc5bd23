package redisprovider

import "context"

// openPartition opens a namespace of one partition as that partition, for
// the tests of a partition's own calls (scripts, pollers, due loop). It
// writes no layout record, as providers before partitions did, and refuses
// a namespace of several partitions.
func openPartition(ctx context.Context, opts Options) (*partition, error) {
	if opts.Partitions > 1 {
		return nil, invalid("new", "Options.Partitions %d: open a namespace of several partitions with New", opts.Partitions)
	}
	p, err := open(ctx, opts)
	if err != nil {
		return nil, err
	}
	n, err := p.storedPartitions(ctx)
	if err == nil && n > 1 {
		err = invalid("new", "namespace %q has %d partitions: open it with New", p.namespace, n)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}
