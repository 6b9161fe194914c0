package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveInsecure runs handler behind a plain-HTTP listener built by Listen with opts.
func serveInsecure(t *testing.T, opts ListenOptions, handler http.Handler) string {
	t.Helper()
	opts.InsecureAddress = "127.0.0.1:0"
	listeners, err := Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- listeners.Serve(ctx, handler, discardLogger()) }()
	t.Cleanup(func() { cancel(); <-done })
	return listeners.Insecure.Addr().String()
}

// rawRequest sends one HTTP/1.1 request with extra header bytes and returns the status line.
func rawRequest(t *testing.T, addr string, headerBytes int) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: %s\r\nConnection: close\r\n\r\n", strings.Repeat("a", headerBytes))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the status line: %v", err)
	}
	return strings.TrimSpace(line)
}

func TestOversizedHeadersAreRefused(t *testing.T) {
	addr := serveInsecure(t, ListenOptions{}, NewHandler(NewStore(time.Hour), nil, discardLogger()))
	if got := rawRequest(t, addr, 1<<10); !strings.Contains(got, " 200 ") {
		t.Errorf("1 KiB of headers: %q, want 200", got)
	}
	// net/http allows 4 KiB of slack over MaxHeaderBytes; 16 KiB is well past both.
	if got := rawRequest(t, addr, 16<<10); !strings.Contains(got, " 431 ") {
		t.Errorf("16 KiB of headers: %q, want 431", got)
	}
}

// TestConnectionCap: with MaxConnections 2, a third client is not served while two hold
// their connections open, and is served as soon as one closes.
func TestConnectionCap(t *testing.T) {
	addr := serveInsecure(t, ListenOptions{MaxConnections: 2}, NewHandler(NewStore(time.Hour), nil, discardLogger()))
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		// A complete keep-alive request makes sure the server has accepted this connection.
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, " 200 ") {
			t.Fatalf("held connection: %q, %v", line, err)
		}
	}
	third, err := net.Dial("tcp", addr) // completes in the kernel's accept queue
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	fmt.Fprint(third, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	reader := bufio.NewReader(third)
	_ = third.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if line, err := reader.ReadString('\n'); err == nil {
		t.Fatalf("third connection served past the cap: %q", line)
	}
	held[0].Close()
	_ = third.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := reader.ReadString('\n'); err != nil || !strings.Contains(line, " 200 ") {
		t.Errorf("third connection after one closed: %q, %v", line, err)
	}
	held[1].Close()
}
