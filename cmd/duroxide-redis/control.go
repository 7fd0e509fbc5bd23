package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// actionJSON is the --json answer of the commands that send a message.
type actionJSON struct {
	Action   string `json:"action"`
	Instance string `json:"instance"`
	Detail   string `json:"detail,omitempty"`
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
	if _, err := s.requireRunning("raise", instance); err != nil {
		return err
	}
	if err := s.client.RaiseEvent(s.ctx, instance, event, *data); err != nil {
		return err
	}
	return c.reportAction("raised", instance, "event "+event)
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
	if c.json {
		return writeJSON(c.stdout, actionJSON{Action: action, Instance: instance, Detail: detail})
	}
	_, err := fmt.Fprintf(c.stdout, "%s: %s (%s)\n", action, instance, detail)
	return err
}
