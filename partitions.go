package dxredis

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// Partitions: where a namespace's keys live when it is spread over a Redis
// Cluster.
//
// A namespace has P partitions, fixed when it is created. Each partition is
// a complete single-slot layout of every key family under its own hash tag,
// so every script still runs in one slot, and the partitions' slots spread
// over the Cluster's shards. With P = 1 the only partition's tag is the
// namespace itself: the layout every namespace had before partitions.

// ClusterSlots is the number of Redis Cluster hash slots.
const ClusterSlots = 16384

// MaxPartitions bounds a namespace's partitions: more would put several in
// one slot range of a small Cluster and buy nothing.
const MaxPartitions = 1024

// PartitionTags returns the hash tags of the P partitions of namespace (P >=
// 1). Tag i is namespace "~" i "." salt, with the smallest salt whose slot
// falls in the i-th of P equal slice of the slot space: a Cluster whose
// masters hold equal contiguous slot ranges (redis-cli --cluster create)
// then holds an equal share of the partitions, where tags hashed at random
// would leave shards with one or two more. With P = 1 the tag is namespace.
func PartitionTags(namespace string, p int) []string {
	if p <= 1 {
		return []string{namespace}
	}
	tags := make([]string, p)
	for i := range tags {
		lo, hi := i*ClusterSlots/p, (i+1)*ClusterSlots/p
		base := namespace + "~" + strconv.Itoa(i) + "."
		for salt := 0; ; salt++ {
			tag := base + strconv.Itoa(salt)
			if s := int(Slot(tag)); s >= lo && s < hi {
				tags[i] = tag
				break
			}
		}
	}
	return tags
}

// RootInstance returns the root of an instance id: the part before its first
// "::sub::", so an orchestration and its automatically named
// sub-orchestrations ("{parent}::sub::{event id}") share a root.
func RootInstance(instance string) string {
	root, _, _ := strings.Cut(instance, "::sub::")
	return root
}

// PartitionOf returns the partition (0..p-1) that holds instance: chosen
// from its root instance's id (FNV-1a), so a whole tree of automatically
// named sub-orchestrations lives in one partition. The rule is part of the
// stored layout: it must never change.
func PartitionOf(instance string, p int) int {
	if p <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(RootInstance(instance)))
	return int(h.Sum32() % uint32(p))
}

// Slot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) of its
// hash tag (the first non-empty {...}) or of the whole key, modulo 16384.
func Slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % ClusterSlots
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), Redis Cluster's
// key hash.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
