package engine

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// A turn given up for blocking outside its context is reported with the
// stacks of its goroutines. Go names each goroutine's creator in its stack
// ("created by F in goroutine N"), so they are found in a dump of all
// goroutines taken when the report is made, and nothing is recorded while
// turns run: a turn's goroutines are the coroutines its engine's goroutine
// started and every goroutine started from those (Go blocks, and goroutines
// the code started itself).

// leftBehind holds the goroutines of turns given up earlier, while they are
// alive: the same engine goroutine started them, and a later report must
// not show them as its own.
var leftBehind = struct {
	sync.Mutex
	ids map[uint64]bool
}{ids: map[uint64]bool{}}

// goroutineStack is one goroutine of a dump.
type goroutineStack struct {
	id, creator uint64
	coroutine   bool // started by coroutine.start
	text        string
}

// Frames of the runtime's own handoff: a goroutine of the turn parked in
// them waits for the engine or for another coroutine, not for something
// outside its context.
var handoffFrames = []string{"engine.(*coroutine).wake(", "engine.(*coroutine).awaitForCode("}

// turnStacks, called on the engine's goroutine, returns the stacks of its
// current turn's goroutines that are blocked somewhere other than the
// runtime's handoff (all of them if none is).
func turnStacks() string {
	engine := currentGoroutineID()
	dump := parseStacks(string(allStacks()))
	children := map[uint64][]goroutineStack{}
	alive := map[uint64]bool{}
	for _, s := range dump {
		children[s.creator] = append(children[s.creator], s)
		alive[s.id] = true
	}
	leftBehind.Lock()
	defer leftBehind.Unlock()
	for id := range leftBehind.ids {
		if !alive[id] {
			delete(leftBehind.ids, id)
		}
	}
	var queue []goroutineStack
	for _, s := range children[engine] {
		if s.coroutine && !leftBehind.ids[s.id] {
			queue = append(queue, s)
		}
	}
	var blocked, parked []string
	for len(queue) > 0 {
		s := queue[0]
		queue = append(queue[1:], children[s.id]...)
		leftBehind.ids[s.id] = true
		if inHandoff(s.text) {
			parked = append(parked, s.text)
		} else {
			blocked = append(blocked, s.text)
		}
	}
	if len(blocked) == 0 {
		blocked = parked
	}
	return strings.Join(blocked, "\n\n")
}

func inHandoff(stack string) bool {
	for _, f := range handoffFrames {
		if strings.Contains(stack, f) {
			return true
		}
	}
	return false
}

// maxStackDump bounds the buffer of a dump of all goroutines.
const maxStackDump = 64 << 20

func allStacks() []byte {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= maxStackDump {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// parseStacks splits a dump of all goroutines into its goroutines.
func parseStacks(dump string) []goroutineStack {
	var out []goroutineStack
	for _, text := range strings.Split(dump, "\n\n") {
		id, ok := stackGoroutineID(text)
		if !ok {
			continue
		}
		s := goroutineStack{id: id, text: text}
		if i := strings.LastIndex(text, "\ncreated by "); i >= 0 {
			line, _, _ := strings.Cut(text[i+1:], "\n")
			s.coroutine = strings.Contains(line, "engine.(*coroutine).start")
			if j := strings.LastIndex(line, " in goroutine "); j >= 0 {
				s.creator, _ = strconv.ParseUint(line[j+len(" in goroutine "):], 10, 64)
			}
		}
		out = append(out, s)
	}
	return out
}

// currentGoroutineID parses the id from the header of the goroutine's own
// stack ("goroutine 42 [running]:"): Go exposes it nowhere else.
func currentGoroutineID() uint64 {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	id, _ := stackGoroutineID(string(b[:n]))
	return id
}

func stackGoroutineID(stack string) (uint64, bool) {
	rest, ok := strings.CutPrefix(stack, "goroutine ")
	if !ok {
		return 0, false
	}
	end := strings.IndexByte(rest, ' ')
	if end < 0 {
		return 0, false
	}
	id, err := strconv.ParseUint(rest[:end], 10, 64)
	return id, err == nil
}
