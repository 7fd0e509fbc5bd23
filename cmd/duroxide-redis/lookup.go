package main

import (
	"slices"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// instanceInfo reads an instance's record; a missing instance is an
// ErrNotFound error, which the exit code reports, naming the instance's
// pending start when a runtime handed it back.
func (s *session) instanceInfo(op, instance string) (duroxide.InstanceInfo, error) {
	if instance == "" {
		return duroxide.InstanceInfo{}, usageErr(op, "empty instance id")
	}
	info, err := s.admin.GetInstanceInfo(s.ctx, instance)
	return info, s.withPendingNote(op, instance, err)
}

// pauseState is the pause state of the instance of a record: the one the
// record carries (read with it, InstanceInfo.Pause), else read apart.
func (s *session) pauseState(info duroxide.InstanceInfo) (duroxide.PauseState, error) {
	if info.Pause != nil {
		return *info.Pause, nil
	}
	return s.prov.InstancePauseState(s.ctx, info.InstanceID)
}

// requireExecution checks that instance has execution id, from the
// instance's execution index.
func (s *session) requireExecution(op, instance string, id uint64) error {
	ids, err := s.admin.ListExecutions(s.ctx, instance)
	if err != nil {
		return err
	}
	if !slices.Contains(ids, id) {
		return duroxide.Errorf(op, duroxide.ErrNotFound, "execution %d of instance %s not found (it has %v)", id, instance, ids)
	}
	return nil
}

// requireRunning returns the record of an instance that can still take
// events; signalling a finished one would be dropped without a trace.
func (s *session) requireRunning(op, instance string) (duroxide.InstanceInfo, error) {
	info, err := s.instanceInfo(op, instance)
	if err != nil {
		return info, err
	}
	if info.Status != "Running" {
		return info, duroxide.Errorf(op, duroxide.ErrConflict, "instance %s is %s, not Running: nothing was sent", instance, info.Status)
	}
	return info, nil
}
