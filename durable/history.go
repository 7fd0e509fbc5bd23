package durable

import "github.com/duroxide-go/duroxide-redis/duroxide"

// historyInfo is what a fetched execution's history says about itself
// (duroxide's HistoryManager): its start and whether it is terminal.
type historyInfo struct {
	started        bool
	name           string
	version        string
	input          string
	parent         *string
	parentID       *uint64
	completed      bool
	failed         bool
	continuedAsNew bool
}

func readHistory(h []duroxide.Event) historyInfo { return indexHistory(h).info() }

// pinnedVersion is the duroxide version the execution's start was written by.
func (hi historyInfo) versionOrEmpty() string {
	if hi.version == "0.0.0" {
		return ""
	}
	return hi.version
}

// batch is a fetched message batch split into its start and its completions
// (duroxide's WorkItemReader).
type batch struct {
	start         duroxide.WorkItem // StartOrchestration or ContinueAsNew, or nil
	completions   []duroxide.WorkItem
	name, input   string
	version       string // "" = latest registered
	parent        *string
	parentID      *uint64
	continueAsNew bool
}

func readBatch(msgs []duroxide.WorkItem, hi historyInfo, instance string) batch {
	var b batch
	for _, m := range msgs {
		switch m.(type) {
		case duroxide.StartOrchestration, duroxide.ContinueAsNew:
			if b.start == nil {
				b.start = m
			}
		case duroxide.ActivityExecute:
		default:
			b.completions = append(b.completions, m)
		}
	}
	switch s := b.start.(type) {
	case duroxide.StartOrchestration:
		b.name, b.input, b.parent, b.parentID = s.Orchestration, s.Input, s.ParentInstance, s.ParentID
		b.version = deref(s.Version)
	case duroxide.ContinueAsNew:
		carried := make([]duroxide.WorkItem, 0, len(s.CarryForwardEvents)+len(b.completions))
		for _, ev := range s.CarryForwardEvents {
			carried = append(carried, duroxide.QueueMessage{Instance: instance, Name: ev[0], Data: ev[1]})
		}
		b.completions = append(carried, b.completions...)
		b.name, b.input, b.version, b.continueAsNew = s.Orchestration, s.Input, deref(s.Version), true
	default:
		b.name, b.input, b.parent, b.parentID = hi.name, hi.input, hi.parent, hi.parentID
		b.version = hi.versionOrEmpty()
	}
	return b
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// lastEventID is the highest event id in the events given.
func lastEventID(evs ...[]duroxide.Event) uint64 {
	var id uint64
	for _, list := range evs {
		for _, ev := range list {
			id = max(id, ev.EventID)
		}
	}
	return id
}
