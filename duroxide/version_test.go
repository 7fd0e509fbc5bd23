package duroxide

import (
	"testing"

	"github.com/Masterminds/semver/v3"
)

func v(s string) *semver.Version { return semver.MustParse(s) }

func TestSemverRangeContains(t *testing.T) {
	narrow := SemverRange{Min: v("1.0.0"), Max: v("1.9.99")}
	wide := SemverRange{Min: v("1.0.0"), Max: v("2.0.0")}
	tests := []struct {
		r       SemverRange
		version string
		want    bool
	}{
		{narrow, "0.9.9", false},
		{narrow, "1.0.0", true},
		{narrow, "1.5.0", true},
		{narrow, "1.9.99", true},
		{narrow, "1.9.100", false},
		{narrow, "2.0.0", false},
		{wide, "1.0.0", true},
		{wide, "1.9.99", true},
		{wide, "2.0.0", true},
		{wide, "2.0.0-rc.1", true}, // pre-release sorts before 2.0.0
		{wide, "2.0.1", false},
		{wide, "1.0.0-rc.1", false}, // ... and before 1.0.0
		{wide, "2.0.0+build.5", true},
		{SemverRange{Min: v("2.0.0-rc.1"), Max: v("2.0.0-rc.1")}, "2.0.0-rc.1", true},
		{SemverRange{Min: v("2.0.0-rc.1"), Max: v("2.0.0-rc.1")}, "2.0.0-rc.2", false},
		{SemverRange{Min: v("2.0.0-rc.1"), Max: v("2.0.0-rc.1")}, "2.0.0", false},
		{SemverRange{Max: v("1.0.0")}, "0.0.0", true},
		{SemverRange{Max: v("1.0.0")}, "1.0.1", false},
		{SemverRange{Min: v("1.0.0")}, "999.0.0", true},
		{SemverRange{Min: v("1.0.0")}, "0.9.0", false},
		{SemverRange{}, "0.0.0", true},
		{SemverRange{Min: v("2.0.0"), Max: v("1.0.0")}, "1.5.0", false}, // inverted range is empty
	}
	for _, tc := range tests {
		if got := tc.r.Contains(v(tc.version)); got != tc.want {
			t.Errorf("[%v, %v].Contains(%s) = %v, want %v", tc.r.Min, tc.r.Max, tc.version, got, tc.want)
		}
	}
	if wide.Contains(nil) || (SemverRange{}).Contains(nil) {
		t.Error("Contains(nil) must be false")
	}
}

func TestDispatcherCapabilityFilterIsCompatible(t *testing.T) {
	disjoint := &DispatcherCapabilityFilter{SupportedDuroxideVersions: []SemverRange{
		{Min: v("1.0.0"), Max: v("1.5.0")},
		{Min: v("3.0.0"), Max: v("3.5.0")},
	}}
	tests := []struct {
		version string
		want    bool
	}{
		{"1.2.0", true},
		{"3.1.0", true}, // only the second range matches
		{"2.0.0", false},
		{"1.5.0", true},
		{"3.5.1", false},
	}
	for _, tc := range tests {
		if got := disjoint.IsCompatible(v(tc.version)); got != tc.want {
			t.Errorf("IsCompatible(%s) = %v, want %v", tc.version, got, tc.want)
		}
	}
	if !disjoint.IsCompatible(nil) {
		t.Error("an unpinned execution must be compatible with a non-empty filter")
	}
	empty := &DispatcherCapabilityFilter{}
	for _, version := range []*semver.Version{v("0.0.0"), v("1.0.0"), nil} {
		if empty.IsCompatible(version) {
			t.Errorf("empty range list compatible with %v", version)
		}
	}
	var none *DispatcherCapabilityFilter
	if !none.IsCompatible(v("9.9.9")) || !none.IsCompatible(nil) {
		t.Error("nil filter means no filtering")
	}
}
