package duroxide

import "testing"

// Benchmarks over the golden fixtures: the same inputs the hot path decodes and encodes
// (history events, queue messages). They report speed only and assert nothing timed.

func BenchmarkDecodeFixtures(b *testing.B) {
	items, events := fixtureBytes(b, "workitems.json"), fixtureBytes(b, "events.json")
	b.ReportAllocs()
	for b.Loop() {
		decodeFixtures(b, items, events)
	}
}

func BenchmarkEncodeFixtures(b *testing.B) {
	items, events := decodeFixtures(b, fixtureBytes(b, "workitems.json"), fixtureBytes(b, "events.json"))
	b.ReportAllocs()
	for b.Loop() {
		for _, item := range items {
			if _, err := MarshalWorkItem(item); err != nil {
				b.Fatal(err)
			}
		}
		for _, e := range events {
			if _, err := e.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// fixtureBytes returns the compact serde form of every case in file.
func fixtureBytes(tb testing.TB, file string) [][]byte {
	var out [][]byte
	for _, c := range loadFixture(tb, file) {
		out = append(out, compactJSON(tb, c.JSON))
	}
	return out
}

func decodeFixtures(b *testing.B, rawItems, rawEvents [][]byte) ([]WorkItem, []Event) {
	items, events := make([]WorkItem, len(rawItems)), make([]Event, len(rawEvents))
	for i, raw := range rawItems {
		var err error
		if items[i], err = UnmarshalWorkItem(raw); err != nil {
			b.Fatal(err)
		}
	}
	for i, raw := range rawEvents {
		if err := events[i].UnmarshalJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
	return items, events
}
