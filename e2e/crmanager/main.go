// A real controller-runtime manager for leasehold's observe-mode e2e scenarios
// (e2e/scenarios/observe.py): it elects itself with controller-runtime's own leader election
// (a Lease named --lease-id, identity `<hostname>_<uuid>`, ReleaseOnCancel false: the
// defaults of every operator built with it) and logs, with wall-clock timestamps, when it starts
// and stops leading. The scenario gives each "pod" its hostname with `unshare --uts`, so the
// identity starts with the pod's name exactly as in a real pod.
//
// Log lines the scenario reads (stdout, one per line):
//
//	STARTING <hostname> <now>
//	LEADING <hostname> <holder> <acquireTime> <now>   the leader-election runnables started;
//	                                         holder and acquireTime as the Lease then says (its
//	                                         acquireTime was stamped before the winning write)
//	STOPPED <hostname> <now>                 their context ended (leadership lost, or shutdown)
//	EXIT "<reason>" <now>                    the manager returned
//
// Times are RFC 3339 UTC with microseconds.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func wallNow() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z") }

func main() {
	// --kubeconfig is controller-runtime's own flag (pkg/client/config), read by ctrl.GetConfig.
	namespace := flag.String("namespace", "default", "namespace of the Lease")
	leaseID := flag.String("lease-id", "", "LeaderElectionID: the Lease's name (required)")
	lease := flag.Duration("lease-duration", 15*time.Second, "LeaseDuration")
	renew := flag.Duration("renew-deadline", 10*time.Second, "RenewDeadline")
	retry := flag.Duration("retry-period", 2*time.Second, "RetryPeriod")
	flag.Parse()
	if *leaseID == "" {
		fmt.Fprintln(os.Stderr, "--lease-id is required")
		os.Exit(2)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "client config: %v\n", err)
		os.Exit(2)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		LeaderElection:          true,
		LeaderElectionID:        *leaseID,
		LeaderElectionNamespace: *namespace,
		LeaseDuration:           lease,
		RenewDeadline:           renew,
		RetryPeriod:             retry,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		os.Exit(2)
	}
	host, _ := os.Hostname()
	clients, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "clientset: %v\n", err)
		os.Exit(2)
	}
	// A runnable without NeedLeaderElection() runs only while the manager leads: its start and
	// the end of its context are the manager's leadership as the operator's controllers see it.
	err = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		holder, acquired := "?", "?"
		if l, err := clients.CoordinationV1().Leases(*namespace).Get(ctx, *leaseID, metav1.GetOptions{}); err == nil {
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			if l.Spec.AcquireTime != nil {
				acquired = l.Spec.AcquireTime.UTC().Format("2006-01-02T15:04:05.000000Z")
			}
		}
		fmt.Printf("LEADING %s %s %s %s\n", host, holder, acquired, wallNow())
		<-ctx.Done()
		fmt.Printf("STOPPED %s %s\n", host, wallNow())
		return nil
	}))
	if err != nil {
		fmt.Fprintf(os.Stderr, "add: %v\n", err)
		os.Exit(2)
	}
	fmt.Printf("STARTING %s %s\n", host, wallNow())
	err = mgr.Start(ctrl.SetupSignalHandler())
	reason := "ok"
	if err != nil {
		reason = err.Error()
	}
	fmt.Printf("EXIT %q %s\n", reason, wallNow())
	if err != nil {
		os.Exit(1)
	}
}
