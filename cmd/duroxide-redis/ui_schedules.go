package main

import (
	"context"
	"net/http"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// schedulesShown caps the schedules the page describes (one read each);
// the CLI's schedules list shows every one.
const schedulesShown = 100

// schedulesData is the schedules page: each schedule with its next times
// and recent firings.
type schedulesData struct {
	Schedules []scheduleRow
	More      int // schedules beyond schedulesShown
}

type scheduleRow struct {
	durable.ScheduleDescription
	When, Overlap, State string
}

func (u *uiServer) schedules(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), u.c.timeout)
	defer cancel()
	list, err := u.s.client.ListSchedules(ctx)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	var d schedulesData
	for i, s := range list {
		if i == schedulesShown {
			d.More = len(list) - i
			break
		}
		full, err := u.s.client.DescribeSchedule(ctx, s.ID, 3)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		if len(full.Recent) > 5 {
			full.Recent = full.Recent[:5]
		}
		state := "active"
		switch {
		case full.Paused:
			state = "paused"
		case len(full.Next) == 0:
			state = "ended"
		}
		d.Schedules = append(d.Schedules, scheduleRow{ScheduleDescription: full, When: scheduleWhen(full.Schedule), Overlap: overlapOf(full.Schedule), State: state})
	}
	u.render(w, r, http.StatusOK, "schedules", "Schedules", d)
}
