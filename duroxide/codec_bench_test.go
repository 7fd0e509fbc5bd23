package duroxide

import "testing"

// Benchmarks over the golden fixtures: the same inputs the hot path decodes and encodes
// (history events, queue messages). They report speed only and assert nothing timed.

func BenchmarkDecodeFixtures(b *testing.B) {
	items, events := fixtureBytes(b, "workitems.json"), fixtureBytes(b, "events.json")
	b.ReportAllocs()
	for b.Loop() {
		for _, raw := range items {
			if _, err := UnmarshalWorkItem(raw); err != nil {
				b.Fatal(err)
			}
		}
		for _, raw := range events {
			var e Event
			if err := e.UnmarshalJSON(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkEncodeFixtures(b *testing.B) {
	var items []WorkItem
	for _, raw := range fixtureBytes(b, "workitems.json") {
		item, err := UnmarshalWorkItem(raw)
		if err != nil {
			b.Fatal(err)
		}
		items = append(items, item)
	}
	var events []Event
	for _, raw := range fixtureBytes(b, "events.json") {
		var e Event
		if err := e.UnmarshalJSON(raw); err != nil {
			b.Fatal(err)
		}
		events = append(events, e)
	}
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
func fixtureBytes(b *testing.B, file string) [][]byte {
	var out [][]byte
	for _, c := range loadFixture(b, file) {
		out = append(out, compactJSON(b, c.JSON))
	}
	return out
}
