package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// action wraps a POST handler with the checks every action needs: not
// read-only, not from another site, the server's form token, and an
// explicit confirmation. do returns where to go next and what happened.
func (u *uiServer) action(do func(s *session, id string, r *http.Request) (next, done string, err error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if u.opts.readOnly {
			http.Error(w, "the dashboard is read-only (--read-only)", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		if crossSite(r) || r.ParseForm() != nil || !same(r.PostForm.Get("csrf"), u.csrf) {
			http.Error(w, "refused: a cross-site request or a stale form (reload the page)", http.StatusForbidden)
			return
		}
		if r.PostForm.Get("confirm") != "yes" {
			u.fail(w, r, usageErr("ui", "tick the confirmation box to go ahead: nothing was done"))
			return
		}
		s, cancel := u.session(r)
		defer cancel()
		next, done, err := do(s, r.PathValue("id"), r)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		http.Redirect(w, r, next+"?done="+url.QueryEscape(done), http.StatusSeeOther)
	}
}

// cancel, raise and delete check what their CLI commands check, through
// the same session helpers.
func (u *uiServer) cancel(s *session, id string, r *http.Request) (string, string, error) {
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	if reason == "" {
		reason = "cancelled by operator"
	}
	if _, err := s.requireRunning("cancel", id); err != nil {
		return "", "", err
	}
	if err := s.client.CancelInstance(s.ctx, id, reason); err != nil {
		return "", "", err
	}
	return instanceURL(id), "cancel requested: " + reason, nil
}

// pause returns the action that pauses (or resumes) a running instance,
// as the pause and resume commands do.
func (u *uiServer) pause(paused bool) func(s *session, id string, r *http.Request) (string, string, error) {
	return func(s *session, id string, _ *http.Request) (string, string, error) {
		op, done := "resume", "resumed: what it held is delivered"
		if paused {
			op, done = "pause", "paused: what is sent to it is held until resume"
		}
		if _, err := s.requireRunning(op, id); err != nil {
			return "", "", err
		}
		var err error
		if paused {
			_, err = s.prov.PauseInstance(s.ctx, id)
		} else {
			_, err = s.prov.ResumeInstance(s.ctx, id)
		}
		if err != nil {
			return "", "", err
		}
		return instanceURL(id), done, nil
	}
}

func (u *uiServer) raise(s *session, id string, r *http.Request) (string, string, error) {
	event, data := strings.TrimSpace(r.PostForm.Get("event")), r.PostForm.Get("data")
	if event == "" {
		return "", "", usageErr("raise", "an event name is required")
	}
	if err := checkJSON("raise", "the data", data); err != nil {
		return "", "", err
	}
	info, err := s.requireRunning("raise", id)
	if err != nil {
		return "", "", err
	}
	warning, err := s.earlyEventWarning(info, event)
	if err != nil {
		return "", "", err
	}
	if err := s.client.RaiseEvent(s.ctx, id, event, data); err != nil {
		return "", "", err
	}
	done := "raised event " + event
	if warning != "" {
		done += "; warning: " + warning
	}
	return instanceURL(id), done, nil
}

func (u *uiServer) delete(s *session, id string, r *http.Request) (string, string, error) {
	res, err := s.deleteOne(id, r.PostForm.Get("force") == "yes")
	if err != nil {
		return "", "", err
	}
	return "/instances", fmt.Sprintf("deleted %s (%d instances, %d events)", id, res.InstancesDeleted, res.EventsDeleted), nil
}

// rerun starts a failed root instance's orchestration again, as a new
// instance: duroxide has no retry in place (a failed execution is final,
// and the runtime acks messages to a finished instance without running
// them). It takes the name, version and input of the failed execution's
// start, so a continue-as-new chain starts again from the execution that
// failed.
func (u *uiServer) rerun(s *session, id string, r *http.Request) (string, string, error) {
	const op = "rerun"
	newID := strings.TrimSpace(r.PostForm.Get("new"))
	if newID == "" {
		return "", "", usageErr(op, "the new instance's id is required")
	}
	info, err := s.instanceInfo(op, id)
	if err != nil {
		return "", "", err
	}
	if info.Status != "Failed" {
		return "", "", duroxide.Errorf(op, duroxide.ErrConflict, "instance %s is %s, not Failed: nothing was started", id, info.Status)
	}
	if info.ParentInstanceID != "" {
		return "", "", duroxide.Errorf(op, duroxide.ErrConflict, "instance %s is a sub-orchestration of %s, which has received its failure: start the parent again instead", id, info.ParentInstanceID)
	}
	events, err := s.admin.ReadHistoryWithExecutionID(s.ctx, id, info.CurrentExecutionID)
	if err != nil {
		return "", "", err
	}
	var start duroxide.OrchestrationStartedEvent
	if len(events) > 0 {
		start, _ = events[0].Kind.(duroxide.OrchestrationStartedEvent)
	}
	if start.Name == "" {
		return "", "", duroxide.Errorf(op, duroxide.ErrConflict, "execution %d of instance %s has no start event to run again", info.CurrentExecutionID, id)
	}
	var opts []durable.OrchestrationOption
	if start.Version != "" {
		opts = append(opts, durable.WithVersion(start.Version))
	}
	if err := s.client.StartOrchestration(s.ctx, newID, start.Name, start.Input, opts...); err != nil {
		return "", "", err
	}
	return instanceURL(newID), fmt.Sprintf("started %s %s as %s with the input of %s", start.Name, start.Version, newID, id), nil
}
