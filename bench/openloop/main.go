// openloop: a fixed-rate (open-loop) HTTP load generator for bench/bench.py.
//
// wrk is closed-loop: each connection waits for an answer before it sends the next request, so
// a slow answer delays the requests behind it and their latency is never counted (coordinated
// omission). Debian has no wrk2. Here request i is due at start + i/rate whatever happened
// before it; its latency counts from that due time, so queueing anywhere (client, kernel,
// server) shows in the percentiles.
//
//	openloop -url http://127.0.0.1:PORT/leader -rate 5000 -conns 64 -duration 10s
//
// prints one JSON object: sent, ok, errors, achieved rate, and latency percentiles in ms.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"sync"
	"time"
)

type result struct {
	Rate     float64 `json:"rate"`
	Conns    int     `json:"conns"`
	Seconds  float64 `json:"seconds"`
	Sent     int     `json:"sent"`
	OK       int     `json:"ok"`
	Errors   int     `json:"errors"`
	Achieved float64 `json:"achievedRate"`
	P50      float64 `json:"p50Ms"`
	P90      float64 `json:"p90Ms"`
	P99      float64 `json:"p99Ms"`
	P999     float64 `json:"p999Ms"`
	Max      float64 `json:"maxMs"`
}

func main() {
	target := flag.String("url", "", "URL to GET")
	rate := flag.Float64("rate", 5000, "requests per second, in all")
	conns := flag.Int("conns", 64, "keep-alive connections")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" {
		fmt.Fprintln(os.Stderr, "openloop: -url must be http://HOST:PORT/PATH")
		os.Exit(2)
	}
	req := []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")

	total := int(*rate * duration.Seconds())
	interval := time.Duration(float64(time.Second) / *rate)
	// Each connection takes the due times i ≡ c (mod conns), so the whole schedule is kept as
	// long as no connection falls behind by more than it can catch up.
	lat := make([][]float64, *conns)
	errs := make([]int, *conns)
	start := time.Now().Add(100 * time.Millisecond)
	var wg sync.WaitGroup
	for c := 0; c < *conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			var conn net.Conn
			var rd *bufio.Reader
			for i := c; i < total; i += *conns {
				due := start.Add(time.Duration(i) * interval)
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				if conn == nil {
					conn, err = net.Dial("tcp", u.Host)
					if err != nil {
						errs[c]++
						conn = nil
						continue
					}
					rd = bufio.NewReader(conn)
				}
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				ok := false
				if _, err := conn.Write(req); err == nil {
					if resp, err := http.ReadResponse(rd, nil); err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						ok = err == nil && resp.StatusCode < 500
						if resp.Close {
							conn.Close()
							conn = nil
						}
					}
				}
				if !ok {
					errs[c]++
					if conn != nil {
						conn.Close()
						conn = nil
					}
					continue
				}
				lat[c] = append(lat[c], float64(time.Since(due).Microseconds())/1000)
			}
			if conn != nil {
				conn.Close()
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	var all []float64
	r := result{Rate: *rate, Conns: *conns, Seconds: duration.Seconds(), Sent: total}
	for c := range lat {
		all = append(all, lat[c]...)
		r.Errors += errs[c]
	}
	sort.Float64s(all)
	r.OK = len(all)
	r.Achieved = float64(r.OK) / elapsed
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		i := int(p / 100 * float64(len(all)))
		if i >= len(all) {
			i = len(all) - 1
		}
		return all[i]
	}
	r.P50, r.P90, r.P99, r.P999 = pct(50), pct(90), pct(99), pct(99.9)
	if len(all) > 0 {
		r.Max = all[len(all)-1]
	}
	json.NewEncoder(os.Stdout).Encode(r)
}
