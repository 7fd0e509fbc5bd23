package duroxide

import "github.com/Masterminds/semver/v3"

// SemverRange is an inclusive range of duroxide versions, [Min, Max]. Comparison follows
// semver precedence (build metadata ignored, 2.0.0-rc.1 < 2.0.0), so a range ending at
// 2.0.0 includes 2.0.0's pre-releases.
//
// A nil bound means "unbounded on that side": {Min: nil, Max: v} is "<= v" and the zero
// SemverRange contains every version. duroxide's own ranges always have both bounds; the
// nil form exists so a Go zero value is safe instead of panicking.
type SemverRange struct{ Min, Max *semver.Version }

// Contains reports whether Min <= v <= Max. A nil v is not in any range: the "unpinned
// execution" rule belongs to the provider (see DispatcherCapabilityFilter), not to ranges.
func (r SemverRange) Contains(v *semver.Version) bool {
	if v == nil {
		return false
	}
	if r.Min != nil && v.LessThan(r.Min) {
		return false
	}
	return r.Max == nil || !v.GreaterThan(r.Max)
}

// DispatcherCapabilityFilter tells FetchOrchestrationItem which executions this runtime can
// replay, by the duroxide version pinned on each execution. Providers apply it before
// taking the instance lock and before reading history, so an incompatible execution is
// never locked (and never counted as an attempt) by a runtime that cannot process it.
type DispatcherCapabilityFilter struct {
	// SupportedDuroxideVersions: an execution is compatible when its pinned version lies
	// in ANY of these ranges (not only the first). An empty list matches nothing.
	SupportedDuroxideVersions []SemverRange
}

// IsCompatible applies the filter to a pinned version.
//
//   - An empty range list is compatible with nothing, not even an unpinned execution: a
//     runtime that declares no supported versions must not receive work.
//   - A nil v (an execution with no pinned version, e.g. written before pinning existed)
//     is compatible with every non-empty filter, which is the provider-level rule duroxide
//     specifies for unpinned executions.
//   - A nil filter means "no filtering" (admin tooling), so everything is compatible.
func (f *DispatcherCapabilityFilter) IsCompatible(v *semver.Version) bool {
	if f == nil {
		return true
	}
	if len(f.SupportedDuroxideVersions) == 0 {
		return false
	}
	if v == nil {
		return true
	}
	for _, r := range f.SupportedDuroxideVersions {
		if r.Contains(v) {
			return true
		}
	}
	return false
}
