package engine

import "github.com/duroxide-go/duroxide-redis/duroxide"

// HistoryInfo is what a fetched execution's history says about itself
// (duroxide's HistoryManager): its start and whether it is terminal.
type HistoryInfo struct {
	Started        bool
	Name           string
	Version        string
	Input          string
	Parent         *string
	ParentID       *uint64
	Completed      bool
	Failed         bool
	ContinuedAsNew bool
}

// versionOrEmpty is the version the execution's start recorded, "" for
// duroxide's unversioned 0.0.0.
func (hi HistoryInfo) versionOrEmpty() string {
	if hi.Version == "0.0.0" {
		return ""
	}
	return hi.Version
}

// Batch is a fetched message batch split into its start and its
// completions (duroxide's WorkItemReader).
type Batch struct {
	Start         duroxide.WorkItem // StartOrchestration or ContinueAsNew, or nil
	Completions   []duroxide.WorkItem
	Name, Input   string
	Version       string // "" = latest registered
	Parent        *string
	ParentID      *uint64
	ContinueAsNew bool
}

// ReadBatch splits msgs, the batch of an execution whose history says hi.
func ReadBatch(msgs []duroxide.WorkItem, hi HistoryInfo, instance string) Batch {
	var b Batch
	for _, m := range msgs {
		switch m.(type) {
		case duroxide.StartOrchestration, duroxide.ContinueAsNew:
			if b.Start == nil {
				b.Start = m
			}
		case duroxide.ActivityExecute:
		default:
			b.Completions = append(b.Completions, m)
		}
	}
	switch s := b.Start.(type) {
	case duroxide.StartOrchestration:
		b.Name, b.Input, b.Parent, b.ParentID = s.Orchestration, s.Input, s.ParentInstance, s.ParentID
		b.Version = deref(s.Version)
	case duroxide.ContinueAsNew:
		carried := make([]duroxide.WorkItem, 0, len(s.CarryForwardEvents)+len(b.Completions))
		for _, ev := range s.CarryForwardEvents {
			carried = append(carried, duroxide.QueueMessage{Instance: instance, Name: ev[0], Data: ev[1]})
		}
		b.Completions = append(carried, b.Completions...)
		b.Name, b.Input, b.Version, b.ContinueAsNew = s.Orchestration, s.Input, deref(s.Version), true
	default:
		b.Name, b.Input, b.Parent, b.ParentID = hi.Name, hi.Input, hi.Parent, hi.ParentID
		b.Version = hi.versionOrEmpty()
	}
	return b
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
