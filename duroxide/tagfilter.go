package duroxide

import "fmt"

// TagFilterKind selects which activity tags a worker accepts.
type TagFilterKind int

// The TagFilter kinds, mirroring duroxide's TagFilter variants.
const (
	// TagDefaultOnly accepts only untagged activities. It is the zero value, so a
	// worker that never thought about tags keeps duroxide's default behaviour.
	TagDefaultOnly TagFilterKind = iota
	// TagOnly accepts only activities whose tag is in Tags (never untagged ones).
	TagOnly
	// TagDefaultAnd accepts untagged activities and activities whose tag is in Tags.
	TagDefaultAnd
	// TagAny accepts every activity (a generalist worker).
	TagAny
	// TagNone accepts nothing (an orchestrator-only process).
	TagNone
)

// String returns the duroxide variant name, for logs and error messages.
func (k TagFilterKind) String() string {
	switch k {
	case TagDefaultOnly:
		return "DefaultOnly"
	case TagOnly:
		return "Tags"
	case TagDefaultAnd:
		return "DefaultAnd"
	case TagAny:
		return "Any"
	case TagNone:
		return "None"
	default:
		return fmt.Sprintf("TagFilterKind(%d)", int(k))
	}
}

// TagFilter is passed to FetchWorkItem to route tagged activities to specialized workers.
// The zero value is DefaultOnly. Providers must Validate the filter and reject an invalid
// one with a permanent error before touching any queue.
type TagFilter struct {
	Kind TagFilterKind
	// Tags is the accepted tag set for TagOnly and TagDefaultAnd; it must be empty for
	// the other kinds. Order is irrelevant. As in duroxide, "" is an ordinary tag,
	// distinct from "untagged" (a nil ActivityExecute.Tag).
	Tags []string
}

// DefaultOnly accepts only untagged activities (duroxide's default).
func DefaultOnly() TagFilter { return TagFilter{Kind: TagDefaultOnly} }

// TagsOnly accepts only activities tagged with one of tags. Unlike duroxide's
// TagFilter::tags it does not panic on a bad count; Validate reports it.
func TagsOnly(tags ...string) TagFilter { return TagFilter{Kind: TagOnly, Tags: cloneTags(tags)} }

// DefaultAndTags accepts untagged activities and activities tagged with one of tags.
func DefaultAndTags(tags ...string) TagFilter {
	return TagFilter{Kind: TagDefaultAnd, Tags: cloneTags(tags)}
}

// AnyTag accepts every activity.
func AnyTag() TagFilter { return TagFilter{Kind: TagAny} }

// NoTags accepts no activity; FetchWorkItem with it returns no work.
func NoTags() TagFilter { return TagFilter{Kind: TagNone} }

// cloneTags copies the caller's slice so later changes to it cannot alter the filter.
func cloneTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	return append([]string(nil), tags...)
}

// Validate enforces duroxide's limits: TagOnly and TagDefaultAnd need between 1 and
// MaxWorkerTags distinct tags (an empty set would make TagOnly match nothing and
// TagDefaultAnd equal DefaultOnly, which is almost certainly a mistake); duplicates are
// rejected rather than merged so that len(Tags) is the real subscription count. The other
// kinds must not carry tags, and an unknown kind is an error.
func (f TagFilter) Validate() error {
	switch f.Kind {
	case TagOnly, TagDefaultAnd:
		return validateTagSet(f.Kind, f.Tags)
	case TagDefaultOnly, TagAny, TagNone:
		if len(f.Tags) != 0 {
			return fmt.Errorf("duroxide: tag filter %s must not carry tags, got %d", f.Kind, len(f.Tags))
		}
		return nil
	default:
		return fmt.Errorf("duroxide: unknown tag filter kind %d", int(f.Kind))
	}
}

func validateTagSet(kind TagFilterKind, tags []string) error {
	if len(tags) == 0 {
		return fmt.Errorf("duroxide: tag filter %s requires at least one tag", kind)
	}
	if len(tags) > MaxWorkerTags {
		return fmt.Errorf("duroxide: tag filter %s allows at most %d tags, got %d", kind, MaxWorkerTags, len(tags))
	}
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if seen[t] {
			return fmt.Errorf("duroxide: tag filter %s has duplicate tag %q", kind, t)
		}
		seen[t] = true
	}
	return nil
}

// Matches reports whether an activity with the given tag (nil = untagged) may be fetched
// under this filter. It does not validate: an unknown kind matches nothing.
func (f TagFilter) Matches(tag *string) bool {
	switch f.Kind {
	case TagAny:
		return true
	case TagDefaultOnly:
		return tag == nil
	case TagOnly:
		return tag != nil && f.contains(*tag)
	case TagDefaultAnd:
		return tag == nil || f.contains(*tag)
	default:
		return false
	}
}

func (f TagFilter) contains(tag string) bool {
	for _, t := range f.Tags {
		if t == tag {
			return true
		}
	}
	return false
}
