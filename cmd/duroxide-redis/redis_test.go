package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisURL is the server every test uses: $DUROXIDE_REDIS_URL when set (CI),
// else a redis-server TestMain starts; "" when neither is available.
var redisURL string

// skipReason says why redisURL is empty.
var skipReason string

func TestMain(m *testing.M) {
	stop := setupRedis()
	code := m.Run()
	stop()
	os.Exit(code)
}

func setupRedis() (stop func()) {
	if u := os.Getenv("DUROXIDE_REDIS_URL"); u != "" {
		redisURL = u
		return func() {}
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		skipReason = "redis-server is not on PATH and DUROXIDE_REDIS_URL is not set"
		return func() {}
	}
	port, err := freePort()
	if err != nil {
		skipReason = "no free port: " + err.Error()
		return func() {}
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		skipReason = "starting redis-server: " + err.Error()
		return func() {}
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	if err := waitForRedis(url); err != nil {
		stop()
		fmt.Fprintln(os.Stderr, "redis-server did not answer:", err)
		os.Exit(1)
	}
	redisURL = url
	return stop
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitForRedis(url string) error {
	o, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	c := redis.NewClient(o)
	defer c.Close()
	var last error
	for range 100 {
		if last = c.Ping(context.Background()).Err(); last == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond) // sleep: the poll interval of a wait for the server to answer (it has no test to fail: it returns the error)
	}
	return last
}

// needRedis skips the test, saying why, when no server is available.
func needRedis(t *testing.T) {
	t.Helper()
	if redisURL == "" {
		t.Skip(skipReason)
	}
}
