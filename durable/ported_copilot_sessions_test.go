package durable_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// copilotSessions is duroxide's SessionManager (a port of durable-copilot-sdk's
// session-manager.ts): the in-memory conversations of one worker process,
// which sessions exist to keep on that process.
type copilotSessions struct {
	mu       sync.Mutex
	messages map[string][]string // session id -> its messages, user and assistant
	creates  int                 // createSession calls, the expensive operation
}

// turn runs one turn of session on this worker: it finds the session or
// creates it, appends the prompt and the reply and returns the reply.
func (m *copilotSessions) turn(session, worker, prompt string, iteration int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	msgs, ok := m.messages[session]
	if !ok {
		m.creates++
	}
	msgs = append(msgs, prompt)
	reply := fmt.Sprintf("[%s] Reply to '%s' (turn %d, history=%d)", worker, prompt, iteration, len(msgs))
	m.messages[session] = append(msgs, reply)
	return reply
}

func (m *copilotSessions) stats() (creates, sessions int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.creates, len(m.messages)
}

func (m *copilotSessions) history(session string) ([]string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	msgs, ok := m.messages[session]
	return msgs, ok
}

// copilotTurnResult is the SDK's TurnResult (types.ts) as the activity
// returns it to the orchestration.
type copilotTurnResult struct {
	Type    string `json:"type"` // completed | wait | error
	Content string `json:"content,omitempty"`
	Seconds int    `json:"seconds,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// copilotRegistry is one worker pod's registration: the runAgentTurn
// activity on this pod's sessions, and the durable-turn orchestration
// (orchestration.ts), which runs a turn on the conversation's session, and
// on a "wait" result sleeps on a durable timer and continues as new with the
// next prompt.
func copilotRegistry(sessions *copilotSessions, assignments *sync.Map, worker string) *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("runAgentTurn", func(ctx *durable.ActivityContext, input string) (string, error) {
			parts := strings.SplitN(input, "|", 4)
			session, prompt := parts[0], parts[1]
			iteration, _ := strconv.Atoi(parts[2])
			if got, ok := ctx.SessionID(); !ok || got != session {
				return "", fmt.Errorf("activity for %s sees session %q (%v)", session, got, ok)
			}
			assignments.Store(session, worker)
			reply := sessions.turn(session, worker, prompt, iteration)
			res := copilotTurnResult{Type: "completed", Content: reply}
			if iteration == 0 && strings.Contains(prompt, "check back") {
				res = copilotTurnResult{Type: "wait", Seconds: 1, Reason: "Checking deployment status", Content: reply}
			}
			b, err := json.Marshal(res)
			return string(b), err
		}).
		MustAddOrchestration("durable-turn", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			parts := strings.SplitN(input, "|", 4)
			session := parts[0]
			iteration, _ := strconv.Atoi(parts[2])
			raw, err := ctx.ScheduleActivity("runAgentTurn", input, durable.WithSession(session)).Get()
			if err != nil {
				return "", err
			}
			var res copilotTurnResult
			if err := json.Unmarshal([]byte(raw), &res); err != nil {
				return "", fmt.Errorf("Failed to parse TurnResult: %v", err)
			}
			switch res.Type {
			case "completed":
				return res.Content, nil
			case "wait":
				if _, err := ctx.Timer(time.Duration(res.Seconds) * 100 * time.Millisecond).Get(); err != nil {
					return "", err
				}
				next := "The wait is complete. Continue with your task."
				ctx.ContinueAsNew(fmt.Sprintf("%s|%s|%d|%s", session, next, iteration+1, parts[3]))
			}
			return "", fmt.Errorf("%s", res.Message)
		})
}

// TestDurableCopilotSDKScaledOutMultiConversation mirrors
// durable_copilot_sdk_scaled_out_multi_conversation (scenarios/sessions.rs):
// two worker runtimes with their own node ids and in-memory sessions share
// one provider; four conversations, two of which wait on a timer and
// continue as new, each keep every turn on the worker that created their
// session, and no session is created twice.
func TestDurableCopilotSDKScaledOutMultiConversation(t *testing.T) {
	t.Parallel()
	var assignments sync.Map // session id -> worker
	workerA, workerB := &copilotSessions{messages: map[string][]string{}}, &copilotSessions{messages: map[string][]string{}}
	opts := func(node string) durable.Options {
		return durable.Options{WorkerConcurrency: 2, OrchestrationConcurrency: 2, WorkerNodeID: node,
			MaxSessionsPerRuntime: 4, LongPollTimeout: 100 * time.Millisecond}
	}
	env := durabletest.Start(t, copilotRegistry(workerA, &assignments, "worker-A"), durabletest.WithOptions(opts("pod-worker-a")))
	env.NewRuntime(t, copilotRegistry(workerB, &assignments, "worker-B"), opts("pod-worker-b"))

	conversations := []struct{ id, prompt string }{
		{"conv-1", "Hello, what is Rust?"},
		{"conv-2", "Explain async/await"},
		{"conv-3", "Deploy my app and check back in 30s"},
		{"conv-4", "Run the test suite and check back later"},
	}
	for _, c := range conversations {
		in := fmt.Sprintf("session-%s|%s|0|You are a helpful coding assistant.", c.id, c.prompt)
		if err := env.Client.StartOrchestration(t.Context(), c.id, "durable-turn", in); err != nil {
			t.Fatal(err)
		}
	}
	results := map[string]string{}
	for _, c := range conversations {
		st := env.Wait(t, c.id)
		if st.Status != durable.StatusCompleted {
			t.Fatalf("conversation %s: %v %s, want completed", c.id, st.Status, st.FailureMessage())
		}
		results[c.id] = st.Output
	}

	for _, id := range []string{"conv-1", "conv-2"} {
		if out := results[id]; !strings.Contains(out, "Reply to") || !strings.Contains(out, "turn 0") {
			t.Errorf("simple conversation %s: %q, want a turn-0 reply", id, out)
		}
	}
	for _, id := range []string{"conv-3", "conv-4"} {
		if out := results[id]; !strings.Contains(out, "turn 1") || !strings.Contains(out, "The wait is complete") {
			t.Errorf("wait conversation %s: %q, want the turn-1 reply to the continuation prompt", id, out)
		}
	}
	createsA, sessionsA := workerA.stats()
	createsB, sessionsB := workerB.stats()
	t.Logf("worker A: %d sessions, worker B: %d", sessionsA, sessionsB)
	if createsA != sessionsA || createsB != sessionsB {
		t.Errorf("creates A %d for %d sessions, B %d for %d: a session was created twice", createsA, sessionsA, createsB, sessionsB)
	}
	if sessionsA+sessionsB != 4 {
		t.Errorf("sessions on A %d + on B %d, want 4: a conversation moved to the other worker", sessionsA, sessionsB)
	}
	for _, id := range []string{"conv-3", "conv-4"} {
		sid := "session-" + id
		w, ok := assignments.Load(sid)
		if !ok {
			t.Fatalf("%s was never served", sid)
		}
		mgr := workerA
		if w == "worker-B" {
			mgr = workerB
		}
		if msgs, ok := mgr.history(sid); !ok || len(msgs) < 4 {
			t.Errorf("%s on %s: %d messages (%v), want at least 4 (2 turns on one worker)", sid, w, len(msgs), ok)
		}
	}
}
