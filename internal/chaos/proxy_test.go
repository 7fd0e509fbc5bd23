package chaos

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// proxy is a loopback TCP proxy in front of a redis-server that can lose a
// reply: the next request containing a marker is forwarded, Redis executes
// it, and the connection is closed before the reply reaches the client, as
// when a connection drops at the worst moment.
type proxy struct {
	ln     net.Listener
	target string
	cut    atomic.Pointer[[]byte] // marker of the request whose reply is lost; nil: none
	wg     sync.WaitGroup
}

// startProxy listens on a free loopback port and forwards to target until
// the test ends.
func startProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &proxy{ln: ln, target: target}
	px.wg.Add(1)
	go px.accept()
	t.Cleanup(func() {
		ln.Close()
		px.wg.Wait()
	})
	return px
}

// Addr is the proxy's host:port.
func (px *proxy) Addr() string { return px.ln.Addr().String() }

// LoseNextReply makes the proxy drop the connection that next sends a request
// containing marker, after Redis received it and before its reply is
// forwarded.
func (px *proxy) LoseNextReply(marker string) {
	m := []byte(marker)
	px.cut.Store(&m)
}

func (px *proxy) accept() {
	defer px.wg.Done()
	for {
		c, err := px.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", px.target)
		if err != nil {
			c.Close()
			continue
		}
		go px.pipe(c, s)
	}
}

// pipe forwards one connection until either side closes.
func (px *proxy) pipe(c, s net.Conn) {
	var mute atomic.Bool
	go func() { // replies, unless muted
		buf := make([]byte, 64<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 && !mute.Load() {
				if _, werr := c.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		c.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if m := px.cut.Load(); m != nil && bytes.Contains(buf[:n], *m) && px.cut.CompareAndSwap(m, nil) {
				mute.Store(true)
				_, _ = s.Write(buf[:n])
				time.Sleep(100 * time.Millisecond) // sleep: Redis executes it and replies into the void; the muted reply is the only sign, and it is dropped
				break
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			if err != io.EOF {
				break
			}
			break
		}
	}
	c.Close()
	s.Close()
}
