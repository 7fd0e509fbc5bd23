// Command prometheus runs a small durable workflow on Redis, instrumented with
// extra/dxotel, and serves its metrics for Prometheus through the
// OpenTelemetry Prometheus exporter.
//
//	go run . -redis redis://127.0.0.1:6379/0 -listen 127.0.0.1:9464
//	curl -s 127.0.0.1:9464/metrics | grep ^duroxide_
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"
)

func main() {
	redisURL := flag.String("redis", "redis://127.0.0.1:6379/0", "Redis URL")
	listen := flag.String("listen", "127.0.0.1:9464", "address of the /metrics endpoint")
	n := flag.Int("instances", 10, "Greeting instances to run at start")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *redisURL, *listen, *n, logger); err != nil {
		logger.Error("prometheus example failed", "error", err)
		os.Exit(1)
	}
}

// run serves /metrics until ctx ends, after running n greetings.
func run(ctx context.Context, redisURL, listen string, n int, logger *slog.Logger) error {
	a, err := newApp(ctx, redisURL, logger)
	if err != nil {
		return err
	}
	defer a.close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", a.metrics)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	logger.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	if err := a.runGreetings(ctx, n); err != nil {
		return err
	}
	logger.Info("greetings done; scrape away, Ctrl-C to stop", "instances", n)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
