package duroxide

import (
	"strings"
	"testing"
)

func TestTagFilterMatches(t *testing.T) {
	gpu, cpu := ptr("gpu"), ptr("cpu")
	tests := []struct {
		name                        string
		filter                      TagFilter
		untagged, member, nonMember bool
	}{
		{"zero value", TagFilter{}, true, false, false},
		{"DefaultOnly", DefaultOnly(), true, false, false},
		{"TagsOnly", TagsOnly("gpu"), false, true, false},
		{"DefaultAndTags", DefaultAndTags("gpu"), true, true, false},
		{"AnyTag", AnyTag(), true, true, true},
		{"NoTags", NoTags(), false, false, false},
		{"unknown kind", TagFilter{Kind: 99, Tags: []string{"gpu"}}, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.filter.Matches(nil); got != tc.untagged {
				t.Errorf("Matches(untagged) = %v", got)
			}
			if got := tc.filter.Matches(gpu); got != tc.member {
				t.Errorf("Matches(gpu) = %v", got)
			}
			if got := tc.filter.Matches(cpu); got != tc.nonMember {
				t.Errorf("Matches(cpu) = %v", got)
			}
		})
	}
	// Matching is by value, not by pointer identity, and empty string is a real tag.
	if !TagsOnly("a", "gpu").Matches(ptr("gp" + "u")) {
		t.Error("second tag of the set not matched")
	}
	if DefaultAndTags("gpu").Matches(ptr("")) {
		t.Error("empty-string tag treated as untagged")
	}
}

func TestTagFilterValidate(t *testing.T) {
	five := []string{"a", "b", "c", "d", "e"}
	six := append(append([]string{}, five...), "f")
	tests := []struct {
		name    string
		filter  TagFilter
		wantErr string // "" = valid
	}{
		{"zero value", TagFilter{}, ""},
		{"DefaultOnly", DefaultOnly(), ""},
		{"AnyTag", AnyTag(), ""},
		{"NoTags", NoTags(), ""},
		{"TagsOnly 1", TagsOnly("gpu"), ""},
		{"TagsOnly 5", TagsOnly(five...), ""},
		{"TagsOnly 0", TagsOnly(), "at least one tag"},
		{"TagsOnly 6", TagsOnly(six...), "at most 5 tags, got 6"},
		{"TagsOnly duplicate", TagsOnly("gpu", "gpu"), "duplicate tag"},
		{"DefaultAndTags 1", DefaultAndTags("gpu"), ""},
		{"DefaultAndTags 5", DefaultAndTags(five...), ""},
		{"DefaultAndTags 0", DefaultAndTags(), "at least one tag"},
		{"DefaultAndTags 6", DefaultAndTags(six...), "at most 5 tags"},
		{"DefaultAndTags duplicate", DefaultAndTags("a", "b", "a"), "duplicate tag"},
		{"DefaultOnly with tags", TagFilter{Kind: TagDefaultOnly, Tags: []string{"gpu"}}, "must not carry tags"},
		{"Any with tags", TagFilter{Kind: TagAny, Tags: []string{"gpu"}}, "must not carry tags"},
		{"None with tags", TagFilter{Kind: TagNone, Tags: []string{"gpu"}}, "must not carry tags"},
		{"unknown kind", TagFilter{Kind: TagNone + 1}, "unknown tag filter kind"},
		{"negative kind", TagFilter{Kind: -1}, "unknown tag filter kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.filter.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("accepted, want error containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestTagFilterConstructors(t *testing.T) {
	tags := []string{"gpu"}
	f := TagsOnly(tags...)
	tags[0] = "changed"
	if !f.Matches(ptr("gpu")) {
		t.Error("TagsOnly aliases the caller's slice")
	}
	if (TagFilter{}).Kind != DefaultOnly().Kind || DefaultOnly().Tags != nil {
		t.Error("DefaultOnly is not the zero value")
	}
	kinds := map[TagFilterKind]TagFilter{TagOnly: f, TagDefaultAnd: DefaultAndTags("x"), TagAny: AnyTag(), TagNone: NoTags()}
	for want, filter := range kinds {
		if filter.Kind != want {
			t.Errorf("constructor for %v built kind %v", want, filter.Kind)
		}
	}
	if TagDefaultAnd.String() != "DefaultAnd" || TagFilterKind(42).String() != "TagFilterKind(42)" {
		t.Errorf("String: %s %s", TagDefaultAnd, TagFilterKind(42))
	}
}
