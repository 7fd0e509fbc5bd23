package duroxide

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The files in testdata/ are verbatim copies of ../../shared/fixtures/duroxide-json/
// (workitems.json, events.json, error_details.json), the golden serde_json output of the
// Rust duroxide crate. They are copied so this package's tests run without the shared
// directory; TestFixtureCopiesMatchOriginals keeps the copies honest when it is present.

var fixtureFiles = []string{"workitems.json", "events.json", "error_details.json"}

const sharedFixtureDir = "../../shared/fixtures/duroxide-json"

type fixtureCase struct {
	Name string          `json:"name"`
	JSON json.RawMessage `json:"json"`
}

func loadFixture(tb testing.TB, file string) []fixtureCase {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		tb.Fatalf("read fixture: %v", err)
	}
	var cases []fixtureCase
	if err := json.Unmarshal(data, &cases); err != nil {
		tb.Fatalf("parse fixture %s: %v", file, err)
	}
	if len(cases) == 0 {
		tb.Fatalf("fixture %s has no cases", file)
	}
	return cases
}

// compactJSON returns raw without insignificant whitespace; json.Compact keeps escapes
// as written, so the result is what serde_json::to_string produced.
func compactJSON(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		tb.Fatalf("compact: %v", err)
	}
	return buf.Bytes()
}

// generic parses JSON into interface{} keeping numbers exact, for semantic comparison.
func generic(tb testing.TB, raw []byte) any {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("parse %s: %v", raw, err)
	}
	return v
}

func assertSameJSON(tb testing.TB, got, want []byte) {
	tb.Helper()
	if !reflect.DeepEqual(generic(tb, got), generic(tb, want)) {
		tb.Errorf("JSON differs semantically\n got: %s\nwant: %s", got, want)
	}
	if c := compactJSON(tb, want); !bytes.Equal(got, c) {
		tb.Errorf("JSON differs byte-wise\n got: %s\nwant: %s", got, c)
	}
}

func ptr[T any](v T) *T { return &v }

// assertCodecError checks that a codec call failed (got is what it produced instead) with
// an error of the given kind whose text contains want.
func assertCodecError(t *testing.T, got any, err error, want string, kind error) {
	t.Helper()
	if err == nil {
		t.Fatalf("succeeded with %#v, want error containing %q", got, want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %q is not %v", err, kind)
	}
}
