module github.com/duroxide-go/duroxide-redis/bench

go 1.26.0

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/duroxide-go/duroxide-redis v0.0.0-00010101000000-000000000000
	github.com/hibiken/asynq v0.26.0
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/spf13/cast v1.10.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/time v0.14.0 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
)

// The library is developed next to the bench, which always measures the
// working tree's provider, never a published version. go.work at the root
// does the same for workspace builds; this keeps `go mod tidy` and builds
// with GOWORK=off in this directory working too.
replace github.com/duroxide-go/duroxide-redis => ../
