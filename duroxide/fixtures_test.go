package duroxide

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFixtureCopiesMatchOriginals(t *testing.T) {
	if _, err := os.Stat(sharedFixtureDir); err != nil {
		t.Skipf("shared fixture directory %s not present: %v", sharedFixtureDir, err)
	}
	for _, file := range fixtureFiles {
		orig, err := os.ReadFile(filepath.Join(sharedFixtureDir, file))
		if err != nil {
			t.Fatalf("read original %s: %v", file, err)
		}
		cp, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatalf("read copy %s: %v", file, err)
		}
		if !bytes.Equal(orig, cp) {
			t.Errorf("testdata/%s differs from %s/%s; re-copy it", file, sharedFixtureDir, file)
		}
	}
}

func namePrefix(name string) string { return strings.SplitN(name, "_", 2)[0] }

func TestWorkItemFixtures(t *testing.T) {
	seen := map[string]bool{}
	cases := loadFixture(t, "workitems.json")
	if len(cases) != len(expectedWorkItems) {
		t.Errorf("fixture has %d cases, expectation table has %d", len(cases), len(expectedWorkItems))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			item, err := UnmarshalWorkItem(tc.JSON)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			typeName := reflect.TypeOf(item).Name()
			if typeName != namePrefix(tc.Name) {
				t.Errorf("decoded type %s, case name implies %s", typeName, namePrefix(tc.Name))
			}
			seen[typeName] = true
			want, ok := expectedWorkItems[tc.Name]
			if !ok {
				t.Fatalf("no expected Go value for case %s", tc.Name)
			}
			if !reflect.DeepEqual(item, want) {
				t.Errorf("decoded value\n got: %#v\nwant: %#v", item, want)
			}
			out, err := MarshalWorkItem(item)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			assertSameJSON(t, out, tc.JSON)
		})
	}
	if len(seen) != len(workItems.pointers) {
		t.Errorf("fixtures cover %d WorkItem variants, codec knows %d", len(seen), len(workItems.pointers))
	}
}

func TestEventFixtures(t *testing.T) {
	seen := map[string]bool{}
	cases := loadFixture(t, "events.json")
	if len(cases) != len(expectedEvents) {
		t.Errorf("fixture has %d cases, expectation table has %d", len(cases), len(expectedEvents))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var ev Event
			if err := ev.UnmarshalJSON(tc.JSON); err != nil {
				t.Fatalf("decode: %v", err)
			}
			typeName := reflect.TypeOf(ev.Kind).Name()
			if typeName != namePrefix(tc.Name)+"Event" {
				t.Errorf("decoded kind %s, case name implies %sEvent", typeName, namePrefix(tc.Name))
			}
			seen[ev.Kind.EventType()] = true
			want, ok := expectedEvents[tc.Name]
			if !ok {
				t.Fatalf("no expected Go value for case %s", tc.Name)
			}
			if !reflect.DeepEqual(ev, want) {
				t.Errorf("decoded value\n got: %#v\nwant: %#v", ev, want)
			}
			out, err := ev.MarshalJSON()
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			assertSameJSON(t, out, tc.JSON)
		})
	}
	if len(seen) != len(eventKinds.pointers) {
		t.Errorf("fixtures cover %d event types, codec knows %d", len(seen), len(eventKinds.pointers))
	}
}

func TestErrorDetailsFixtures(t *testing.T) {
	seen := map[string]bool{}
	cases := loadFixture(t, "error_details.json")
	if len(cases) != len(expectedErrorDetails) {
		t.Errorf("fixture has %d cases, expectation table has %d", len(cases), len(expectedErrorDetails))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var d ErrorDetails
			if err := d.UnmarshalJSON(tc.JSON); err != nil {
				t.Fatalf("decode: %v", err)
			}
			variant := setPointerField(t, d)
			if variant != namePrefix(tc.Name) {
				t.Errorf("decoded variant %s, case name implies %s", variant, namePrefix(tc.Name))
			}
			seen[variant] = true
			want, ok := expectedErrorDetails[tc.Name]
			if !ok {
				t.Fatalf("no expected Go value for case %s", tc.Name)
			}
			if !reflect.DeepEqual(d, want) {
				t.Errorf("decoded value\n got: %#v\nwant: %#v", d, want)
			}
			out, err := d.MarshalJSON()
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			assertSameJSON(t, out, tc.JSON)
		})
	}
	if len(seen) != reflect.TypeFor[ErrorDetails]().NumField() {
		t.Errorf("fixtures cover %d ErrorDetails variants, codec knows %d", len(seen), reflect.TypeFor[ErrorDetails]().NumField())
	}
}

// setPointerField returns the name of the only non-nil pointer field of a union struct.
func setPointerField(t *testing.T, union any) string {
	t.Helper()
	v := reflect.ValueOf(union)
	var set []string
	for i := 0; i < v.NumField(); i++ {
		if !v.Field(i).IsNil() {
			set = append(set, v.Type().Field(i).Name)
		}
	}
	if len(set) != 1 {
		t.Fatalf("%T has %d variants set: %v", union, len(set), set)
	}
	return set[0]
}
