package main

import (
	"fmt"
	"strings"
)

// functionsJSON is the --json answer of functions.
type functionsJSON struct {
	Current string   `json:"current"`
	Stale   []string `json:"stale"`
	Deleted bool     `json:"deleted"`
}

// runFunctions lists, and with --delete-stale deletes, the function
// libraries older duroxide-redis versions left on the server. Deleting is an
// operator's decision rather than something New does on its own: during a
// rolling upgrade the old version still runs, and each deletion would make
// it load its library again.
func runFunctions(c *cli, args []string) error {
	fs := c.flags("functions")
	del := fs.Bool("delete-stale", false, "delete the libraries of other versions")
	_, s, err := c.parseAndOpen(fs, args, 0, 0)
	if err != nil {
		return err
	}
	defer s.close()
	current := s.prov.FunctionLibraryName()
	// libraries are server-wide, not per partition: any partition's
	// provider lists them on every primary
	stale, err := s.prov.StaleFunctionLibraries(s.ctx, *del)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(c.stdout, functionsJSON{Current: current, Stale: append([]string{}, stale...), Deleted: *del})
	}
	if current == "" {
		_, err := fmt.Fprintln(c.stdout, "the server has no Redis Functions: the scripts run with EVALSHA")
		return err
	}
	fmt.Fprintf(c.stdout, "current library: %s\n", current)
	switch {
	case len(stale) == 0:
		_, err = fmt.Fprintln(c.stdout, "no stale libraries")
	case *del:
		_, err = fmt.Fprintf(c.stdout, "deleted %d stale libraries: %s\n", len(stale), strings.Join(stale, " "))
	default:
		_, err = fmt.Fprintf(c.stdout, "stale libraries (%d): %s\n(delete them with --delete-stale once no older version runs)\n", len(stale), strings.Join(stale, " "))
	}
	return err
}
