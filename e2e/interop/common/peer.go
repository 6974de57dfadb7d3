// An interop peer for leasehold's e2e tests: client-go's real tools/leaderelection behind the
// same localhost HTTP API as leasehold (GET /leader, GET /is-leader), so the e2e Sampler can ask
// it who leads exactly as it asks a leasehold agent.
//
// This one file is shared (by symlink) by every peer module in e2e/interop; each module pins a
// different client-go, and everything client-go does comes from that version: lock types
// (resourcelock.NewFromKubeconfig: v0.23 still has configmaps/endpoints and the *leases
// multilocks, v0.28+ only leases), timing validation, acquire/renew/release.
//
// Two things differ from a plain client-go program, both on purpose:
//   - RunOrDie runs in a loop. client-go's Run returns once leadership is lost and a client-go
//     program (kube-controller-manager, a controller-runtime manager) then exits and is restarted
//     by the kubelet; a sidecar keeps contending instead, so this peer starts a new elector (new
//     lock object, same identity) at once. The identity stays, so a peer that lost only its own
//     renewals re-acquires its still-unexpired lease at once, as a restarted process with the
//     same identity would.
//   - The lock is wrapped (observingLock) to see every record the elector reads or writes: the
//     HTTP API reports the holder and term from it, and a release that writes an empty holder
//     over a record whose last read named someone else is logged as "RELEASE-RACE" (client-go's
//     release checks its locally observed holder, not the record it fetched). The wrapper only
//     forwards calls; it changes nothing client-go does.
//
// isLeader is true only between OnStartedLeading and OnStoppedLeading of the current run, and
// false as soon as the context handed to OnStartedLeading is cancelled (renew gave up, or
// SIGTERM). SIGTERM/SIGINT cancels the root context, so with --release-on-cancel client-go
// releases the lock before Run returns; the process exits 0 afterwards. A second signal exits at
// once.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// clientGoVersion is the k8s.io/client-go module version this binary was built with.
func clientGoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/client-go" {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

func wallNow() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z") }

// view is what the HTTP API reports: the last record the elector read or wrote, and whether the
// current run leads.
type view struct {
	mu        sync.Mutex
	seen      bool
	rec       rl.LeaderElectionRecord
	leaderCtx context.Context // set between OnStartedLeading and OnStoppedLeading
	run       int             // the current RunOrDie call, counted from 1
}

func (v *view) observe(r rl.LeaderElectionRecord) {
	v.mu.Lock()
	v.seen, v.rec = true, r
	v.mu.Unlock()
}

// observingLock forwards every call to the real client-go lock and records what passed through.
type observingLock struct {
	rl.Interface
	identity, version string
	v                 *view
	mu                sync.Mutex
	lastGet           *rl.LeaderElectionRecord // the record of the last successful Get
}

func (l *observingLock) Get(ctx context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	r, raw, err := l.Interface.Get(ctx)
	if err == nil && r != nil {
		c := *r
		l.mu.Lock()
		l.lastGet = &c
		l.mu.Unlock()
		l.v.observe(c)
	}
	return r, raw, err
}

func (l *observingLock) Create(ctx context.Context, ler rl.LeaderElectionRecord) error {
	err := l.Interface.Create(ctx, ler)
	if err == nil {
		l.v.observe(ler)
	}
	return err
}

func (l *observingLock) Update(ctx context.Context, ler rl.LeaderElectionRecord) error {
	// Only release() writes an empty holder.
	release := ler.HolderIdentity == ""
	var before string
	race := false
	if release {
		l.mu.Lock()
		if l.lastGet != nil {
			before = l.lastGet.HolderIdentity
			race = before != l.identity
		}
		l.mu.Unlock()
		klog.Infof("release: writing an empty holder to %s (last read holder %q, transitions %d) at %s",
			l.Describe(), before, ler.LeaderTransitions, wallNow())
		if race {
			klog.Warningf("RELEASE-RACE client-go %s: %s releases %s although the record it last read "+
				"names %q, not itself (release() checks its locally observed holder) at %s",
				l.version, l.identity, l.Describe(), before, wallNow())
		}
	}
	err := l.Interface.Update(ctx, ler)
	if err == nil {
		l.v.observe(ler)
	}
	if release {
		if err != nil {
			klog.Infof("release of %s failed: %v", l.Describe(), err)
		} else {
			klog.Infof("released %s at %s", l.Describe(), wallNow())
			if race {
				klog.Warningf("RELEASE-RACE client-go %s: %s BLANKED %s held by %q at %s",
					l.version, l.identity, l.Describe(), before, wallNow())
			}
		}
	}
	return err
}

type options struct {
	identity, lockType, namespace, lockName, httpAddress, kubeconfig string
	leaseDuration, renewDeadline, retryPeriod                        time.Duration
	releaseOnCancel                                                  bool
}

func main() {
	var o options
	fs := flag.CommandLine
	fs.StringVar(&o.identity, "identity", "", "this peer's identity in the lock (required)")
	fs.StringVar(&o.lockType, "lock-type", "leases", "resourcelock type, as client-go's resourcelock.New takes it")
	fs.StringVar(&o.namespace, "namespace", "default", "namespace of the lock object")
	fs.StringVar(&o.lockName, "lock-name", "", "name of the lock object (required)")
	fs.DurationVar(&o.leaseDuration, "lease-duration", 15*time.Second, "LeaderElectionConfig.LeaseDuration")
	fs.DurationVar(&o.renewDeadline, "renew-deadline", 10*time.Second, "LeaderElectionConfig.RenewDeadline")
	fs.DurationVar(&o.retryPeriod, "retry-period", 2*time.Second, "LeaderElectionConfig.RetryPeriod")
	fs.BoolVar(&o.releaseOnCancel, "release-on-cancel", false, "LeaderElectionConfig.ReleaseOnCancel")
	fs.StringVar(&o.httpAddress, "http-address", "127.0.0.1:4040", "address of the local HTTP API")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig to use (empty: in-cluster config)")
	version := fs.Bool("version", false, "print the client-go version and exit")
	klog.InitFlags(fs)
	_ = fs.Set("v", "2")
	flag.Parse()
	cgv := clientGoVersion()
	if *version {
		fmt.Println(cgv)
		return
	}
	if o.identity == "" || o.lockName == "" {
		fmt.Fprintln(os.Stderr, "--identity and --lock-name are required")
		os.Exit(2)
	}

	var cfg *rest.Config
	var err error
	if o.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "client config: %v\n", err)
		os.Exit(2)
	}
	cfg.UserAgent = "interop-peer/" + cgv

	root, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		s := <-sigs
		klog.Infof("%v: cancelling the election context (release-on-cancel=%v) at %s", s, o.releaseOnCancel, wallNow())
		cancel()
		s = <-sigs
		klog.Infof("second %v: exiting at once", s)
		klog.Flush()
		os.Exit(1)
	}()

	v := &view{}
	ln, err := net.Listen("tcp", o.httpAddress)
	if err != nil {
		fmt.Fprintf(os.Stderr, "listen %s: %v\n", o.httpAddress, err)
		os.Exit(2)
	}
	isLeader := func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.leaderCtx != nil && v.leaderCtx.Err() == nil && root.Err() == nil
	}
	leaderHandler := func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		yes := isLeader()
		v.mu.Lock()
		seen, rec, run := v.seen, v.rec, v.run
		v.mu.Unlock()
		body := map[string]any{
			"identity": o.identity,
			"isLeader": yes,
			"lock":     map[string]string{"type": o.lockType, "namespace": o.namespace, "name": o.lockName},
			"clientGo": cgv,
			"run":      run,
		}
		status := http.StatusOK
		if !seen {
			status = http.StatusServiceUnavailable
			body["reason"] = "the lock has not been read yet"
			body["name"], body["leader"], body["term"] = nil, nil, nil
		} else {
			body["name"], body["leader"] = rec.HolderIdentity, rec.HolderIdentity
			body["term"] = rec.LeaderTransitions
			body["leaseDurationSeconds"] = rec.LeaseDurationSeconds
			if !rec.AcquireTime.IsZero() {
				body["acquireTime"] = rec.AcquireTime.UTC().Format(time.RFC3339)
			}
			if !rec.RenewTime.IsZero() {
				body["renewTime"] = rec.RenewTime.UTC().Format(time.RFC3339)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/leader", leaderHandler)
	mux.HandleFunc("/", leaderHandler)
	mux.HandleFunc("/is-leader", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if isLeader() {
			fmt.Fprintln(w, "true")
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "false")
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	go func() { _ = http.Serve(ln, mux) }()

	klog.Infof("interop peer %s: client-go %s, lock %s %s/%s, lease %v renew %v retry %v, release-on-cancel %v, http %s",
		o.identity, cgv, o.lockType, o.namespace, o.lockName, o.leaseDuration, o.renewDeadline, o.retryPeriod,
		o.releaseOnCancel, ln.Addr())

	for run := 1; root.Err() == nil; run++ {
		lock, err := rl.NewFromKubeconfig(o.lockType, o.namespace, o.lockName,
			rl.ResourceLockConfig{Identity: o.identity}, cfg, o.renewDeadline)
		if err != nil {
			fmt.Fprintf(os.Stderr, "lock: %v\n", err)
			os.Exit(2)
		}
		stopped := false // of this run; guards a late OnStartedLeading goroutine
		v.mu.Lock()
		v.run = run
		v.mu.Unlock()
		leaderelection.RunOrDie(root, leaderelection.LeaderElectionConfig{
			Lock:            &observingLock{Interface: lock, identity: o.identity, version: cgv, v: v},
			LeaseDuration:   o.leaseDuration,
			RenewDeadline:   o.renewDeadline,
			RetryPeriod:     o.retryPeriod,
			ReleaseOnCancel: o.releaseOnCancel,
			Name:            o.lockName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					v.mu.Lock()
					if !stopped {
						v.leaderCtx = ctx
					}
					v.mu.Unlock()
					klog.Infof("OnStartedLeading: %s leads (run %d) at %s", o.identity, run, wallNow())
					<-ctx.Done()
					klog.Infof("leader context cancelled (run %d) at %s", run, wallNow())
				},
				OnStoppedLeading: func() {
					v.mu.Lock()
					stopped = true
					v.leaderCtx = nil
					v.mu.Unlock()
					klog.Infof("OnStoppedLeading (run %d) at %s", run, wallNow())
				},
				OnNewLeader: func(id string) { klog.Infof("OnNewLeader: %q", id) },
			},
		})
		if root.Err() == nil {
			// client-go programs exit here; a sidecar contends again.
			klog.Infof("RunOrDie returned (leadership lost); contending again as a sidecar would")
		}
	}
	klog.Infof("exiting at %s", wallNow())
	klog.Flush()
}
