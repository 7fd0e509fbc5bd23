package duroxide

import (
	"bytes"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestWireTagsAreWellFormed walks every struct the codec reaches. A field without a dx tag
// would silently stay off the wire, a misspelt option would silently make a field
// required, and a key that needs escaping would be written raw, so all are errors here.
func TestWireTagsAreWellFormed(t *testing.T) {
	untagged := map[reflect.Type]bool{ // their fields are variants or self-coded parts
		reflect.TypeFor[ErrorDetails](): true, reflect.TypeFor[PoisonMessageType](): true,
		reflect.TypeFor[AppErrorKind](): true,
	}
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			walk(f.Type)
			tag, ok := f.Tag.Lookup("dx")
			if !ok {
				if !untagged[typ] && !(typ == reflect.TypeFor[Event]() && f.Name == "Kind") {
					t.Errorf("%s.%s has no dx tag", typ.Name(), f.Name)
				}
				continue
			}
			key, opt, _ := strings.Cut(tag, ",")
			validOpt := opt == "" || opt == "default" || (opt == "omitempty" && f.Type.Kind() == reflect.Pointer)
			// jsonWriter.key writes keys unescaped, so they must be plain snake_case.
			if key == "" || strings.Trim(key, "abcdefghijklmnopqrstuvwxyz_") != "" || !validOpt {
				t.Errorf("%s.%s: malformed dx tag %q", typ.Name(), f.Name, tag)
			}
		}
	}
	walk(reflect.TypeFor[Event]())
	for _, p := range eventKinds.pointers {
		walk(p)
	}
	for _, p := range workItems.pointers {
		walk(p)
	}
	// Event, 26 kinds, 11 work items, ErrorDetails with 4 variants, AppErrorKind,
	// PoisonMessageType with 3 variants.
	if want := 1 + 26 + 11 + 1 + 4 + 1 + 1 + 3; len(seen) != want {
		t.Errorf("walked %d structs, want %d", len(seen), want)
	}
}

func TestUnsupportedFieldTypeIsAnErrorNotAPanic(t *testing.T) {
	type odd struct {
		N int `dx:"n"`
	}
	if _, err := marshalWithContext("odd", func(w *jsonWriter) { writeTagged(w, "Odd", reflect.ValueOf(odd{})) }); err == nil ||
		!strings.Contains(err.Error(), `field "n": no wire form for int`) {
		t.Errorf("encode: %v", err)
	}
	var o odd
	err := readFields("odd", []jsonMember{{key: "n", value: jsonValue{kind: jsonNumber, text: "1"}}}, reflect.ValueOf(&o).Elem())
	if err == nil || !strings.Contains(err.Error(), "odd.n: no wire form for int") {
		t.Errorf("decode: %v", err)
	}
}

// TestConcurrentCodecUse exercises the shared field cache and decoder pool from several
// goroutines; run with -race it also proves they need no further locking.
func TestConcurrentCodecUse(t *testing.T) {
	raws := fixtureBytes(t, "events.json")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, raw := range raws {
				var e Event
				if err := e.UnmarshalJSON(raw); err != nil {
					t.Errorf("decode %s: %v", raw, err)
					continue
				}
				if out, err := e.MarshalJSON(); err != nil || !bytes.Equal(out, raw) {
					t.Errorf("re-encode of %s gave %s, %v", raw, out, err)
				}
			}
		})
	}
	wg.Wait()
}
