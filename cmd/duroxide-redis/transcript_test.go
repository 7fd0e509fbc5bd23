package main

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// addProcessOrder registers the orchestration the README's transcript runs:
// it leaves KV, two custom statuses, an event wait, an activity and a child.
func addProcessOrder(reg *durable.Registry) {
	reg.MustAddActivity("ChargeCard", func(_ *durable.ActivityContext, _ string) (string, error) {
		return `{"charged":true}`, nil
	})
	reg.MustAddOrchestration("ProcessOrder", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		ctx.SetValue("customer", "ada")
		ctx.SetCustomStatus("awaiting approval")
		if _, err := ctx.WaitForEvent("approve").Get(); err != nil {
			return "", err
		}
		if _, err := ctx.ScheduleActivity("ChargeCard", in).Get(); err != nil {
			return "", err
		}
		ctx.SetCustomStatus("shipping")
		return ctx.ScheduleSubOrchestration("Ship", in).Get()
	})
	reg.MustAddOrchestration("Ship", func(_ *durable.OrchestrationContext, _ string) (string, error) {
		return `"shipped"`, nil
	})
}

// transcriptStep is one "$ duroxide-redis ..." line of the README's
// transcript and what the session printed after it.
type transcriptStep struct {
	line     string   // the command line as the README shows it
	args     []string // its arguments after the executable name
	exitLine bool     // it ends in `; echo "exit $?"`, so output's last line is the exit code
	output   []string
}

const transcriptIntro = "The transcript below is a real session"

// readTranscript parses the README's transcript block.
func readTranscript(t *testing.T) []transcriptStep {
	t.Helper()
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, transcriptIntro)
	if i < 0 {
		t.Fatalf("README.md has no %q", transcriptIntro)
	}
	text = text[i:]
	start := strings.Index(text, "```text\n")
	if start < 0 {
		t.Fatal("README.md's transcript has no ```text block")
	}
	text = text[start+len("```text\n"):]
	end := strings.Index(text, "```")
	if end < 0 {
		t.Fatal("README.md's transcript block is not closed")
	}
	var steps []transcriptStep
	for _, line := range strings.Split(strings.TrimSuffix(text[:end], "\n"), "\n") {
		cmd, ok := strings.CutPrefix(line, "$ ")
		if !ok {
			if len(steps) == 0 {
				t.Fatalf("transcript output %q comes before any command", line)
			}
			steps[len(steps)-1].output = append(steps[len(steps)-1].output, line)
			continue
		}
		s := transcriptStep{line: line}
		cmd, s.exitLine = strings.CutSuffix(cmd, `; echo "exit $?"`)
		words, err := shellWords(cmd)
		if err != nil {
			t.Fatalf("transcript line %q: %v", line, err)
		}
		if len(words) == 0 || words[0] != "duroxide-redis" {
			t.Fatalf("transcript line %q does not run duroxide-redis", line)
		}
		s.args = words[1:]
		steps = append(steps, s)
	}
	if len(steps) == 0 {
		t.Fatal("README.md's transcript has no commands")
	}
	return steps
}

// shellWords splits a command line as sh does for the quoting the README
// uses: single quotes, double quotes (with backslash escapes) and blanks.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`\"$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, fmt.Errorf("unterminated double quote")
			}
			inWord = true
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

var (
	relTimeRE = regexp.MustCompile(`\b(just now|\d+[smhd] ago|in \d+[smhd])\b`)
	rfc3339RE = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	cellGapRE = regexp.MustCompile(`  +`)
)

// fixTimes replaces what legitimately differs between the README's
// session and this one, relative and absolute times, with placeholders as
// wide as the README's ("2s ago", RFC 3339 UTC seconds), so that the
// README's column alignment stays comparable.
func fixTimes(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		l = relTimeRE.ReplaceAllString(l, "Ns ago")
		l = rfc3339RE.ReplaceAllString(l, "YYYY-MM-DDThh:mm:ssZ")
		out[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(out, "\n")
}

// realign lays out text's cells (runs of two or more spaces end one) again
// with the CLI's table settings: a real "just now" is wider than the
// README's "2s ago", so once both are placeholders the columns must be
// measured anew before the README's alignment can be compared.
func realign(text string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, l := range strings.Split(text, "\n") {
		fmt.Fprintln(tw, cellGapRE.ReplaceAllString(l, "\t"))
	}
	tw.Flush()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// TestReadmeTranscript replays the README's CLI transcript against a fresh
// deployment running the ProcessOrder it describes and checks that the
// binary prints what the README shows, so the README cannot drift from
// the tool.
func TestReadmeTranscript(t *testing.T) {
	t.Parallel()
	steps := readTranscript(t)
	d := newDeployment(t)
	closed, err := freePort() // nothing listens there once freePort returns
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := "127.0.0.1:" + strconv.Itoa(closed)
	for _, s := range steps {
		args := append([]string(nil), s.args...)
		// The README's unreachable server is a port of its machine; here it
		// is a closed local port, named back in the output.
		readmeAddr := ""
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "--redis" {
				readmeAddr = redisAddr(t, args[i+1])
				args[i+1] = strings.Replace(args[i+1], readmeAddr, closedAddr, 1)
			}
		}
		r := d.cli(args...)
		got := r.stdout + r.stderr
		if readmeAddr != "" {
			got = strings.ReplaceAll(got, closedAddr, readmeAddr)
		}
		gotLines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if got == "" {
			gotLines = nil
		}
		if s.exitLine {
			gotLines = append(gotLines, fmt.Sprintf("exit %d", r.code))
		} else if r.code != exitOK {
			t.Errorf("%s: exit code %d, but the README shows no failure\nstderr:\n%s", s.line, r.code, r.stderr)
		}
		g, w := fixTimes(gotLines), fixTimes(s.output)
		if g != w && realign(g) != w {
			t.Errorf("%s: the binary printed (times as placeholders)\n%s\n\nbut README.md shows\n%s", s.line, realign(g), w)
		}
		if r.code == exitOK {
			d.awaitTranscriptState(t, args)
		}
	}
}

// awaitTranscriptState waits until a command's effect has happened, as the
// README's session did between commands: a started instance has run its
// first turn, a raised or cancelled one has finished.
func (d *deployment) awaitTranscriptState(t *testing.T, args []string) {
	t.Helper()
	switch {
	case len(args) >= 3 && args[0] == "start":
		d.waitRunning(t, args[2])
	case len(args) >= 2 && (args[0] == "raise" || args[0] == "cancel"):
		d.wait(t, args[1])
	}
}

// redisAddr is the host:port of a transcript's Redis URL.
func redisAddr(t *testing.T, url string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(url, "redis://")
	if !ok {
		t.Fatalf("transcript URL %q is not redis://", url)
	}
	host, _, _ := strings.Cut(rest, "/")
	if _, _, err := net.SplitHostPort(host); err != nil {
		t.Fatalf("transcript URL %q: %v", url, err)
	}
	return host
}
