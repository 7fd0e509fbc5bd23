package duroxide

import (
	"bytes"
	"reflect"
	"testing"
)

// Fuzz properties, for every input: decoding never panics; when it succeeds, encoding the
// result succeeds, is stable (same bytes twice) and decodes back to the same value.

func seedFixtures(f *testing.F, file string) {
	for _, c := range loadFixture(f, file) {
		f.Add([]byte(c.JSON))
		f.Add(compactJSON(f, c.JSON))
	}
}

func checkRoundTrip[T any](t *testing.T, x T, encode func(T) ([]byte, error), decode func([]byte) (T, error)) {
	t.Helper()
	first, err := encode(x)
	if err != nil {
		t.Fatalf("decoded value does not encode: %v\nvalue: %#v", err, x)
	}
	second, err := encode(x)
	if err != nil || !bytes.Equal(first, second) {
		t.Fatalf("encoding not stable:\n%s\n%s (%v)", first, second, err)
	}
	back, err := decode(first)
	if err != nil {
		t.Fatalf("our own output does not decode: %v\n%s", err, first)
	}
	if !reflect.DeepEqual(back, x) {
		t.Fatalf("round trip changed the value\n got %#v\nwant %#v\njson %s", back, x, first)
	}
}

func FuzzUnmarshalWorkItem(f *testing.F) {
	seedFixtures(f, "workitems.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		item, err := UnmarshalWorkItem(data)
		if err != nil {
			return
		}
		checkRoundTrip(t, item, MarshalWorkItem, UnmarshalWorkItem)
	})
}

func FuzzEventUnmarshal(f *testing.F) {
	seedFixtures(f, "events.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Event
		if err := e.UnmarshalJSON(data); err != nil {
			return
		}
		checkRoundTrip(t, e, Event.MarshalJSON, func(b []byte) (Event, error) {
			var out Event
			err := out.UnmarshalJSON(b)
			return out, err
		})
	})
}

func FuzzErrorDetailsUnmarshal(f *testing.F) {
	seedFixtures(f, "error_details.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		var d ErrorDetails
		if err := d.UnmarshalJSON(data); err != nil {
			return
		}
		checkRoundTrip(t, d, ErrorDetails.MarshalJSON, func(b []byte) (ErrorDetails, error) {
			var out ErrorDetails
			err := out.UnmarshalJSON(b)
			return out, err
		})
	})
}
