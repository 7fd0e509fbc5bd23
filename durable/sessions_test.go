package durable

import "testing"

// TestSessionTrackerCap checks the cap a worker slot applies after a fetch:
// a new session is refused at the cap, an admitted one never is, and a
// session ending wakes the slots parked at the cap.
func TestSessionTrackerCap(t *testing.T) {
	t.Parallel()
	s := newSessionTracker()
	if !s.admit("A", 1) {
		t.Fatal("first session refused under a cap of 1")
	}
	if s.admit("B", 1) {
		t.Error("second session admitted over a cap of 1")
	}
	if !s.admit("A", 1) {
		t.Error("another activity of a running session refused at the cap")
	}
	ok, freed := s.room(1)
	if ok {
		t.Fatal("room reported at the cap")
	}
	s.remove("A")
	select {
	case <-freed:
		t.Fatal("freed closed while session A still runs an activity")
	default:
	}
	s.remove("A")
	select {
	case <-freed:
	default:
		t.Fatal("freed not closed when the last session ended")
	}
	if ok, _ := s.room(1); !ok || !s.admit("B", 1) {
		t.Error("no room after the running session ended")
	}
}

// TestSessionTrackerReleaserActsOnce checks that a worker releasing its
// session before the ack and again when the item is done counts it once.
func TestSessionTrackerReleaserActsOnce(t *testing.T) {
	t.Parallel()
	s := newSessionTracker()
	s.admit("A", 1)
	s.admit("A", 1)
	release := s.releaser("A")
	release()
	release()
	if ok, _ := s.room(1); ok {
		t.Error("session A freed after one of its two activities was released twice")
	}
	s.releaser("A")()
	if ok, _ := s.room(1); !ok {
		t.Error("session A still counted after both activities were released")
	}
}
