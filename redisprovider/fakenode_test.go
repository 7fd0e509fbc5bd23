package redisprovider

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeNode is a one-node Redis Cluster made of a loopback proxy in front of
// a server (miniredis here): it answers CLUSTER SLOTS itself (all slots are
// its own) and HELLO with an error (so clients speak RESP2, which it
// parses), forwards every other request and its one reply, and can lose a
// reply: the next request a matcher picks is forwarded, the server runs it,
// and the client's connection is closed instead of answered, as when a
// connection drops at the worst moment. It counts the requests the matcher
// picks, so a test sees whether a client sent a command again.
type fakeNode struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	lose    func(cmd []string) bool // the next request to lose the reply of; nil: none
	watch   func(cmd []string) bool // the requests counted in seen
	seen    int
	conns   []net.Conn
	stopped bool
}

// startFakeNode listens on a free loopback port, forwarding to target,
// until the test ends.
func startFakeNode(t testing.TB, target string) *fakeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &fakeNode{ln: ln, target: target}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.accept(&wg)
	}()
	t.Cleanup(func() {
		ln.Close()
		n.mu.Lock()
		n.stopped = true
		for _, c := range n.conns {
			c.Close()
		}
		n.mu.Unlock()
		wg.Wait()
	})
	return n
}

// Addr is the node's host:port.
func (n *fakeNode) Addr() string { return n.ln.Addr().String() }

// LoseNextReply loses the reply of the next request match picks, and
// counts from now on every request it picks.
func (n *fakeNode) LoseNextReply(match func(cmd []string) bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lose, n.watch, n.seen = match, match, 0
}

// Seen is how many requests the last LoseNextReply's matcher picked.
func (n *fakeNode) Seen() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.seen
}

func (n *fakeNode) accept(wg *sync.WaitGroup) {
	for {
		c, err := n.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", n.target)
		if err != nil {
			c.Close()
			continue
		}
		n.mu.Lock()
		if n.stopped {
			n.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		n.conns = append(n.conns, c, s)
		n.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.serve(c, s)
		}()
	}
}

// serve answers one client connection, request by request.
func (n *fakeNode) serve(c, s net.Conn) {
	defer c.Close()
	defer s.Close()
	cr, sr := bufio.NewReader(c), bufio.NewReader(s)
	for {
		raw, cmd, err := readRequest(cr)
		if err != nil {
			return
		}
		name := strings.ToUpper(cmd[0])
		switch {
		case name == "HELLO":
			_, err = io.WriteString(c, "-ERR unknown command 'HELLO'\r\n")
		case name == "CLUSTER" && len(cmd) > 1 && strings.EqualFold(cmd[1], "SLOTS"):
			_, err = io.WriteString(c, n.slots())
		default:
			err = n.forward(c, s, sr, raw, cmd)
		}
		if err != nil {
			return
		}
	}
}

// forward sends one request to the server and its reply back, unless the
// reply is to be lost: then the server runs it and the client is cut off.
func (n *fakeNode) forward(c, s net.Conn, sr *bufio.Reader, raw []byte, cmd []string) error {
	n.mu.Lock()
	lost := n.lose != nil && n.lose(cmd)
	if lost {
		n.lose = nil
	}
	if n.watch != nil && n.watch(cmd) {
		n.seen++
	}
	n.mu.Unlock()
	if _, err := s.Write(raw); err != nil {
		return err
	}
	reply, err := readReply(sr)
	if err != nil {
		return err
	}
	if lost {
		return io.ErrClosedPipe // the server ran it; the client never hears
	}
	_, err = c.Write(reply)
	return err
}

// slots is the CLUSTER SLOTS reply: every slot is this node's.
func (n *fakeNode) slots() string {
	host, port, _ := net.SplitHostPort(n.Addr())
	id := strings.Repeat("f", 40)
	return fmt.Sprintf("*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$%d\r\n%s\r\n:%s\r\n$40\r\n%s\r\n", len(host), host, port, id)
}

// readRequest reads one RESP request (an array of bulk strings): its bytes
// and its words.
func readRequest(r *bufio.Reader) ([]byte, []string, error) {
	raw, err := readReply(r)
	if err != nil {
		return nil, nil, err
	}
	words, err := requestWords(raw)
	if err != nil || len(words) == 0 {
		return nil, nil, fmt.Errorf("fake node: bad request %q", raw)
	}
	return raw, words, nil
}

// requestWords decodes an array of bulk strings.
func requestWords(raw []byte) ([]string, error) {
	r := bufio.NewReader(strings.NewReader(string(raw)))
	head, err := r.ReadString('\n')
	if err != nil || head[0] != '*' {
		return nil, fmt.Errorf("not an array")
	}
	count, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	words := make([]string, count)
	for i := range words {
		h, err := r.ReadString('\n')
		if err != nil || h[0] != '$' {
			return nil, fmt.Errorf("not a bulk string")
		}
		size, _ := strconv.Atoi(strings.TrimSpace(h[1:]))
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		words[i] = string(b[:size])
	}
	return words, nil
}

// readReply reads one complete RESP2 value and returns its bytes.
func readReply(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, fmt.Errorf("fake node: short line %q", line)
	}
	size, _ := strconv.Atoi(strings.TrimSpace(string(line[1:])))
	switch line[0] {
	case '+', '-', ':':
		return line, nil
	case '$':
		if size < 0 {
			return line, nil
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return append(line, b...), nil
	case '*':
		out := line
		for range max(size, 0) {
			e, err := readReply(r)
			if err != nil {
				return nil, err
			}
			out = append(out, e...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("fake node: unknown reply type %q", line)
}
