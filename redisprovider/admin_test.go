package redisprovider

import (
	"context"
	"slices"
	"testing"
)

// Parent links come from callers' acks, so children indexes can form a
// cycle below a non-root; the tree walk (inside a script, where a loop would
// block Redis) lists each instance once and ends.
func TestInstanceTreeSurvivesCycles(t *testing.T) {
	m, p := newMiniProvider(t)
	ctx := context.Background()
	k := p.Keys()
	for _, e := range [][2]string{{"a", "b"}, {"b", "c"}, {"c", "a"}, {"b", "b"}} {
		if _, err := m.ZAdd(k.Children(e[0]), 0, e[1]); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := p.GetInstanceTree(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; tree.RootID != "a" || !slices.Equal(tree.AllIDs, want) {
		t.Fatalf("GetInstanceTree(a) = %+v, want root a, ids %v", tree, want)
	}
}
