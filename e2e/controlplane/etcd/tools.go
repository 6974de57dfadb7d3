//go:build tools

// Package tools pins the etcd server built by ../build.sh
// (package main lives at the root of go.etcd.io/etcd/server/v3).
package tools

import _ "go.etcd.io/etcd/server/v3"
