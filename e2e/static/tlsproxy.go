// tlsproxy: a TLS front for the test apiserver on 127.0.0.1 with Go's crypto/tls, the stack the
// kube-apiserver itself serves with, limited to some TLS versions. It forwards each connection to
// the apiserver over a fresh TLS connection (bearer tokens pass through; client certificates
// cannot). e2e/scenarios/static.py uses it to show that the static binary's TLS stack speaks
// TLS 1.3 only and TLS 1.2 only servers.
//
// Usage: tlsproxy -cert C -key K -ca CA -upstream HOST:PORT -min 1.2|1.3 -max 1.2|1.3
// Prints "listening PORT", then "version TLSv1.x" for each handshake it completes.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

func version(s string) uint16 {
	switch s {
	case "1.2":
		return tls.VersionTLS12
	case "1.3":
		return tls.VersionTLS13
	}
	fmt.Fprintf(os.Stderr, "tlsproxy: unknown TLS version %q\n", s)
	os.Exit(2)
	return 0
}

func main() {
	cert := flag.String("cert", "", "serving certificate (PEM)")
	key := flag.String("key", "", "serving key (PEM)")
	ca := flag.String("ca", "", "CA of the upstream apiserver (PEM)")
	upstream := flag.String("upstream", "", "host:port of the apiserver")
	minV := flag.String("min", "1.2", "lowest TLS version offered")
	maxV := flag.String("max", "1.3", "highest TLS version offered")
	flag.Parse()

	pair, err := tls.LoadX509KeyPair(*cert, *key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlsproxy:", err)
		os.Exit(1)
	}
	caPEM, err := os.ReadFile(*ca)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlsproxy:", err)
		os.Exit(1)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	host, _, _ := net.SplitHostPort(*upstream)
	up := &tls.Config{RootCAs: pool, ServerName: host}
	down := &tls.Config{Certificates: []tls.Certificate{pair},
		MinVersion: version(*minV), MaxVersion: version(*maxV)}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlsproxy:", err)
		os.Exit(1)
	}
	var out sync.Mutex
	say := func(format string, a ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(format+"\n", a...)
		os.Stdout.Sync()
	}
	say("listening %d", ln.Addr().(*net.TCPAddr).Port)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func(c net.Conn) {
			defer c.Close()
			d := tls.Server(c, down)
			if err := d.Handshake(); err != nil {
				say("handshake-error %v", err)
				return
			}
			say("version %s", tls.VersionName(d.ConnectionState().Version))
			u, err := tls.Dial("tcp", *upstream, up)
			if err != nil {
				say("upstream-error %v", err)
				return
			}
			defer u.Close()
			done := make(chan struct{}, 2)
			go func() { io.Copy(u, d); done <- struct{}{} }()
			go func() { io.Copy(d, u); done <- struct{}{} }()
			<-done
		}(c)
	}
}
