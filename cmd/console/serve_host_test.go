package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeRefusesOtherHosts: console serve wires the Host check from its
// real listener: a rebinding name gets 421, the bound address an answer.
func TestServeRefusesOtherHosts(t *testing.T) {
	db := tempDB(t)
	l, err := listen("127.0.0.1:0", defaultServeAddr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() { done <- serve(ctx, env{strings.NewReader(""), &strings.Builder{}, &stderr}, db, l) }()
	defer func() { cancel(); <-done }()
	addr := l.Addr().String()
	get := func(host string) int {
		req, _ := http.NewRequest("GET", "http://"+addr+"/healthz", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for deadline := time.Now().Add(10 * time.Second); get(addr) != http.StatusOK; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve never answered: %s", stderr.String())
		}
	}
	_, port, _ := net.SplitHostPort(addr)
	for host, want := range map[string]int{
		addr: http.StatusOK, "localhost:" + port: http.StatusOK,
		"rebind.evil.example:" + port: http.StatusMisdirectedRequest, "127.0.0.1.nip.io:" + port: http.StatusMisdirectedRequest,
		"127.0.0.1:1": http.StatusMisdirectedRequest,
	} {
		if got := get(host); got != want {
			t.Errorf("Host %s: %d, want %d", host, got, want)
		}
	}
}

func TestListenHostsNamesTheAddrFlagsHost(t *testing.T) {
	l, err := listen("localhost:0", defaultServeAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	if got := listenHosts(l); len(got) != 1 || got[0] != "localhost:"+port {
		t.Errorf("listenHosts = %v, want [localhost:%s]", got, port)
	}
	ip, err := listen("127.0.0.1:0", defaultServeAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer ip.Close()
	if got := listenHosts(ip); got != nil {
		t.Errorf("an IP --addr adds %v; its bound address covers it", got)
	}
}
