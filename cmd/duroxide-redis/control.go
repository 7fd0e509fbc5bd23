package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/Masterminds/semver/v3"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// actionJSON is the --json answer of the commands that send a message.
type actionJSON struct {
	Action   string `json:"action"`
	Instance string `json:"instance"`
	Detail   string `json:"detail,omitempty"`
	// Warning says what the operator may not expect, such as an event
	// raised while the instance does not wait for it.
	Warning string `json:"warning,omitempty"`
}

func runStart(c *cli, args []string) error {
	fs := c.flags("start")
	input := fs.String("input", "null", "orchestration input, a JSON document")
	version := fs.String("version", "", "orchestration version to run (default: the newest the workers have)")
	pos, err := c.parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	name, instance := pos[0], pos[1]
	if err := checkJSON("start", "--input", *input); err != nil {
		return err
	}
	var opts []durable.OrchestrationOption
	if *version != "" {
		if _, err := semver.StrictNewVersion(*version); err != nil {
			return usageErr("start", "--version %q is not a semantic version: %v", *version, err)
		}
		opts = append(opts, durable.WithVersion(*version))
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	// duroxide drops a start for an existing instance without a word; an
	// operator should hear about it instead.
	info, err := s.instanceInfo("start", instance)
	if err == nil {
		return duroxide.Errorf("start", duroxide.ErrConflict, "instance %s already exists (%s, %s): nothing was sent", instance, info.OrchestrationName, info.Status)
	}
	if !errors.Is(err, duroxide.ErrNotFound) {
		return err
	}
	// a second start would queue behind the first, which no runtime runs
	if n, err := s.pendingStart(instance); err != nil || n != nil {
		if err != nil {
			return err
		}
		return duroxide.Errorf("start", duroxide.ErrConflict, "instance %s already has a %s: nothing was sent", instance, n.Message())
	}
	if err := s.client.StartOrchestration(s.ctx, instance, name, *input, opts...); err != nil {
		return err
	}
	return c.reportAction("started", instance, "orchestration "+name)
}

func runRaise(c *cli, args []string) error {
	fs := c.flags("raise")
	data := fs.String("data", "", "event data, a JSON document")
	pos, err := c.parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	instance, event := pos[0], pos[1]
	if err := checkJSON("raise", "--data", *data); err != nil {
		return err
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	info, err := s.requireRunning("raise", instance)
	if err != nil {
		return err
	}
	// read before sending, so that a failed read sends nothing
	warning, err := s.earlyEventWarning(info, event)
	if err != nil {
		return err
	}
	if err := s.client.RaiseEvent(s.ctx, instance, event, *data); err != nil {
		return err
	}
	return c.reportWarnedAction("raised", instance, "event "+event, warning)
}

// runEnqueue is raise's buffered alternative: a message on the instance's
// persistent queue waits there until the code dequeues it, where an
// external event nobody waits for is dropped.
func runEnqueue(c *cli, args []string) error {
	fs := c.flags("enqueue")
	data := fs.String("data", "", "message data, a JSON document")
	pos, err := c.parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	instance, queue := pos[0], pos[1]
	if err := checkJSON("enqueue", "--data", *data); err != nil {
		return err
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	if _, err := s.requireRunning("enqueue", instance); err != nil {
		return err
	}
	if err := s.client.EnqueueEvent(s.ctx, instance, queue, *data); err != nil {
		return err
	}
	return c.reportAction("enqueued", instance, "queue "+queue)
}

// earlyEventWarning says, when the instance's current execution has no
// subscription waiting for event, that duroxide will record the event but
// deliver it to no wait unless the code subscribes before the runtime
// takes it in. It reads the history the event will meet; the answer is a
// warning, not a refusal, since the code may be about to wait.
func (s *session) earlyEventWarning(info duroxide.InstanceInfo, event string) (string, error) {
	h, err := s.admin.ReadHistoryWithExecutionID(s.ctx, info.InstanceID, info.CurrentExecutionID)
	if err != nil {
		return "", err
	}
	if slices.Contains(durable.WaitingExternalEvents(h), event) {
		return "", nil
	}
	return fmt.Sprintf("instance %s is not waiting for event %s now; an event raised before the orchestration waits for it is recorded but not delivered (use enqueue and ctx.Dequeue for messages that must wait)", info.InstanceID, event), nil
}

func runCancel(c *cli, args []string) error {
	fs := c.flags("cancel")
	reason := fs.String("reason", "cancelled by operator", "reason recorded in the instance's failure")
	pos, s, err := c.parseAndOpen(fs, args, 1, 1)
	if err != nil {
		return err
	}
	defer s.close()
	if _, err := s.requireRunning("cancel", pos[0]); err != nil {
		return err
	}
	if err := s.client.CancelInstance(s.ctx, pos[0], *reason); err != nil {
		return err
	}
	return c.reportAction("cancel requested", pos[0], "reason "+*reason)
}

// checkJSON rejects a flag value that is set but not JSON, before anything
// is sent.
func checkJSON(op, flagName, v string) error {
	if v != "" && !json.Valid([]byte(v)) {
		return usageErr(op, "%s is not valid JSON: %q", flagName, abbreviate(v, payloadWidth))
	}
	return nil
}

func (c *cli) reportAction(action, instance, detail string) error {
	return c.reportWarnedAction(action, instance, detail, "")
}

// reportWarnedAction reports a done action with a warning, which goes to
// stderr for people, so that stdout stays the action's answer.
func (c *cli) reportWarnedAction(action, instance, detail, warning string) error {
	if c.json {
		return writeJSON(c.stdout, actionJSON{Action: action, Instance: instance, Detail: detail, Warning: warning})
	}
	if _, err := fmt.Fprintf(c.stdout, "%s: %s (%s)\n", action, instance, detail); err != nil {
		return err
	}
	if warning != "" {
		fmt.Fprintf(c.stderr, "duroxide-redis: warning: %s\n", warning)
	}
	return nil
}

// runPause holds an instance: what is sent to it is stored and delivered
// on resume; no turn of it runs meanwhile.
func runPause(c *cli, args []string) error {
	return setPaused(c, "pause", args, true)
}

// runResume delivers what a paused instance held, in order.
func runResume(c *cli, args []string) error {
	return setPaused(c, "resume", args, false)
}

func setPaused(c *cli, op string, args []string, paused bool) error {
	pos, s, err := c.parseAndOpen(c.flags(op), args, 1, 1)
	if err != nil {
		return err
	}
	defer s.close()
	instance := pos[0]
	var changed bool
	if paused {
		changed, err = s.prov.PauseInstance(s.ctx, instance)
	} else {
		changed, err = s.prov.ResumeInstance(s.ctx, instance)
	}
	if err != nil {
		return err
	}
	st, err := s.prov.InstancePauseState(s.ctx, instance)
	if err != nil {
		return err
	}
	action := "resumed"
	switch {
	case paused && changed:
		action = "paused"
	case paused:
		action = "already paused"
	case !changed:
		action = "not paused"
	}
	return c.reportAction(action, instance, fmt.Sprintf("held: %d", st.Held))
}
