//go:build tools

// Package tools pins the node's Kubernetes commands built by ../build.sh. A module of its own,
// pinned to the same k8s.io/kubernetes as ../../controlplane/k8s: adding these commands there
// would change the control plane's cache stamp and pull ~40 modules into its graph.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
