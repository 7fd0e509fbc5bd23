package main

import (
	"context"
	"net/http"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// flowData is the flow control page: the limits with what they hold now,
// and the names with a priority or a pause.
type flowData struct {
	Limits      []duroxide.Limit
	Names       []flowRow
	AgingWindow uint64
}

// flow shows the namespace's flow control (docs/flow-control.md), read-only:
// the CLI's limits and flow commands change it.
func (u *uiServer) flow(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), u.c.timeout)
	defer cancel()
	limits, err := u.s.client.Limits(ctx)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	fs, err := u.s.client.FlowSettings(ctx)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "flow", "Flow control", flowData{Limits: limits, Names: flowRows(fs), AgingWindow: fs.AgingWindow})
}
