package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/internal/redistest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// redisServer is a redis-server process owned by one test.
type redisServer struct {
	*redistest.Server
	// evalsha makes newProvider's providers use EVALSHA, not the function
	// library Redis 7 offers
	evalsha bool
}

// startRedis starts a durable redis-server for t (skipped without
// redis-server on PATH).
func startRedis(t testing.TB, extra ...string) *redisServer {
	return &redisServer{Server: redistest.Start(t, extra...)}
}

// newProvider connects a provider to the server's URL in namespace ns,
// closed when the test ends.
func newProvider(t testing.TB, s *redisServer, ns string) *redisprovider.Provider {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := redisprovider.New(ctx, redisprovider.Options{URL: s.URL(), Namespace: ns, ForceEvalsha: s.evalsha})
	if err != nil {
		t.Fatalf("redisprovider.New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// instanceIDs names n instances.
func instanceIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return ids
}

// report logs the checker's call counts and fails the test on violations.
func report(t testing.TB, c *Checker, violations []string) {
	t.Helper()
	t.Logf("calls:\n%s", c.Summary())
	if len(violations) > 20 {
		t.Errorf("%d violations; the first 20:", len(violations))
		violations = violations[:20]
	}
	for _, v := range violations {
		t.Error(v)
	}
}

// quietLogger drops go-redis's internal log lines (dial failures during the
// outages these tests cause on purpose).
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quietLogger{}) }
