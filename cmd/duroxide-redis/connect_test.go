package main

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestRedisClientFromFlags(t *testing.T) {
	c := &cli{getenv: func(string) string { return "" }}
	c.redis = stringList{"rediss://user:pw@127.0.0.1:6380/0"}
	rdb, err := c.redisClient()
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	single, ok := rdb.(*redis.Client)
	if !ok {
		t.Fatalf("one URL built a %T", rdb)
	}
	// NewClient stores the -1 it was given ("never retry") as 0
	if o := single.Options(); o.TLSConfig == nil || o.MaxRetries != 0 || !o.ContextTimeoutEnabled || o.Password != "pw" {
		t.Errorf("single-node options: TLS %v, MaxRetries %d, ContextTimeoutEnabled %v", o.TLSConfig != nil, o.MaxRetries, o.ContextTimeoutEnabled)
	}

	c.redis = stringList{"rediss://:pw@10.0.0.1:7000", "10.0.0.2:7000"}
	rdb, err = c.redisClient()
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	cluster, ok := rdb.(*redis.ClusterClient)
	if !ok {
		t.Fatalf("two URLs built a %T", rdb)
	}
	if o := cluster.Options(); len(o.Addrs) != 2 || o.Addrs[1] != "10.0.0.2:7000" || o.TLSConfig == nil || o.MaxRetries != -1 || o.Password != "pw" {
		t.Errorf("cluster options: %v TLS %v MaxRetries %d", o.Addrs, o.TLSConfig != nil, o.MaxRetries)
	}
}

func TestRedisURLFromEnvironment(t *testing.T) {
	c := &cli{getenv: func(k string) string {
		return map[string]string{"DUROXIDE_REDIS_URL": "redis://a:1,redis://b:2"}[k]
	}}
	if got := c.urls(); len(got) != 2 || got[1] != "redis://b:2" {
		t.Fatalf("urls from the environment: %v", got)
	}
	c.redis = stringList{"redis://flag:3"}
	if got := c.urls(); len(got) != 1 || got[0] != "redis://flag:3" {
		t.Fatalf("the flag must win over the environment: %v", got)
	}
}
