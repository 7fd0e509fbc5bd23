package durable_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// TestCopilotChatScenario mirrors copilot_chat_scenario (scenarios/copilot_chat.rs):
// a client sends typed messages into a queue, the orchestration answers
// each through its custom status (continuing as new between messages), and
// the client follows the replies with WaitForStatusChange.
func TestCopilotChatScenario(t *testing.T) {
	t.Parallel()
	type chatMessage struct {
		Seq  int    `json:"seq"`
		Text string `json:"text"`
	}
	type chatStatus struct {
		State        string  `json:"state"`
		LastResponse *string `json:"last_response"`
		MsgSeq       int     `json:"msg_seq"`
	}
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddActivity("GenerateResponse", prefixedActivity("Echo")).
		MustAddOrchestration("ChatBot", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			msg, err := durable.Dequeue[chatMessage](ctx, "inbox").Get()
			if err != nil {
				return "", err
			}
			resp, err := ctx.ScheduleActivity("GenerateResponse", msg.Text).Get()
			if err != nil {
				return "", err
			}
			b, err := json.Marshal(chatStatus{State: "replied", LastResponse: &resp, MsgSeq: msg.Seq})
			if err != nil {
				return "", err
			}
			ctx.SetCustomStatus(string(b))
			if strings.Contains(strings.ToLower(msg.Text), "bye") {
				return fmt.Sprintf("Chat ended after %d messages", msg.Seq), nil
			}
			ctx.ContinueAsNew("")
			return "", nil
		}))
	const id = "chat-42"
	if err := env.Client.StartOrchestration(t.Context(), id, "ChatBot", ""); err != nil {
		t.Fatal(err)
	}
	var version uint64
	waitReply := func(seq int) chatStatus {
		t.Helper()
		deadline := time.Now().Add(durabletest.DefaultWaitTimeout)
		for {
			st, err := env.Client.WaitForStatusChange(t.Context(), id, version, time.Until(deadline))
			if err != nil {
				t.Fatalf("waiting for the reply to %d: %v", seq, err)
			}
			version = st.CustomStatusVersion
			if st.CustomStatus != nil {
				var cs chatStatus
				if json.Unmarshal([]byte(*st.CustomStatus), &cs) == nil && cs.State == "replied" && cs.MsgSeq == seq {
					return cs
				}
			}
		}
	}
	for i, text := range []string{"Hello!", "How are you?", "Bye!"} {
		if err := env.Client.EnqueueEventJSON(t.Context(), id, "inbox", chatMessage{i + 1, text}); err != nil {
			t.Fatal(err)
		}
		if cs := waitReply(i + 1); cs.LastResponse == nil || *cs.LastResponse != "Echo: "+text {
			t.Fatalf("reply to %q: %+v", text, cs)
		}
	}
	mustComplete(t, env.Wait(t, id), "Chat ended after 3 messages")
}
