package redisprovider

import (
	"slices"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// pageOf builds a partition's page from "id@created" entries.
func pageOf(entries ...string) []duroxide.InstanceInfo {
	var out []duroxide.InstanceInfo
	for _, e := range entries {
		id, at, _ := strings.Cut(e, "@")
		q, err := parsePos(at + ":" + id)
		if err != nil {
			panic(err)
		}
		out = append(out, duroxide.InstanceInfo{InstanceID: q.id, CreatedAt: q.at})
	}
	return out
}

// TestMergePages proves the merge of the partitions' pages keeps one
// newest-first order and never passes a place a partition was not read
// down to: the cases the validation suite's few instances cannot reach
// (scan-bounded short pages beside full ones).
func TestMergePages(t *testing.T) {
	cases := []struct {
		name     string
		pages    [][]duroxide.InstanceInfo
		nexts    []string
		limit    int
		want     []string
		wantNext string
	}{
		{"every partition exhausted, all fit",
			[][]duroxide.InstanceInfo{pageOf("a@10", "b@4"), pageOf("c@7"), nil}, []string{"", "", ""}, 5,
			[]string{"a", "c", "b"}, ""},
		{"every partition exhausted, more than a page",
			[][]duroxide.InstanceInfo{pageOf("a@10", "b@4"), pageOf("c@7", "d@1")}, []string{"", ""}, 2,
			[]string{"a", "c"}, "7:c"},
		{"ties on creation time go by id descending, as ZREVRANGE",
			[][]duroxide.InstanceInfo{pageOf("a@5", "c@5"), pageOf("b@5")}, []string{"", ""}, 3,
			[]string{"c", "b", "a"}, ""},
		{"a full partition: nothing older than its last record is sure",
			[][]duroxide.InstanceInfo{pageOf("a@10", "b@9"), pageOf("c@8", "d@2")}, []string{"9:b", ""}, 2,
			[]string{"a", "b"}, "9:b"},
		{"a scan-bounded partition stops the page at its cursor",
			[][]duroxide.InstanceInfo{pageOf("a@10"), pageOf("c@8", "d@2")}, []string{"6:x", ""}, 3,
			[]string{"a", "c"}, "6:x"},
		{"the newest of several partition cursors bounds the page",
			[][]duroxide.InstanceInfo{pageOf("a@10"), pageOf("c@8", "d@3"), pageOf("e@4")}, []string{"5:q", "3:d", ""}, 10,
			[]string{"a", "c"}, "5:q"},
		{"a cursor's own tie: records as new and greater come first",
			[][]duroxide.InstanceInfo{pageOf("z@5"), pageOf("b@5")}, []string{"5:m", ""}, 10,
			[]string{"z"}, "5:m"},
	}
	for _, c := range cases {
		page, next, err := mergePages(c.pages, c.nexts, c.limit)
		var got []string
		for _, info := range page {
			got = append(got, info.InstanceID)
		}
		if err != nil || !slices.Equal(got, c.want) || next != c.wantNext {
			t.Errorf("%s: %q next %q err %v; want %q next %q", c.name, got, next, err, c.want, c.wantNext)
		}
	}
	if _, _, err := mergePages([][]duroxide.InstanceInfo{nil}, []string{"not a cursor"}, 1); err == nil {
		t.Error("a partition cursor that is not '<ms>:<id>' was accepted")
	}
}
