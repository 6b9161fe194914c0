package hostile

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/server"
	"github.com/mco-dev/mco/internal/testenv"
)

// serverCase is one raw HTTP/1.1 request to the Machine Config Server. Error responses carry
// an empty body by design (as in OpenShift's server: a booting machine only logs the code),
// so the code is the reason, and the server's log line names the pool and the header.
type serverCase struct {
	name    string
	request string // the request line and headers, without the final blank line
	status  string
	log     []string // in the server's log
}

func serverCases() []hostileCase {
	const ignAccept = "Accept: application/vnd.coreos.ignition+json;version="
	rows := []serverCase{
		{"Accept: a spec major we cannot serve", "GET /config/worker HTTP/1.1\r\n" + ignAccept + "4.0.0", "400 Bad Request",
			[]string{`msg="bad Accept header" pool=worker`, `version=4.0.0"`, "unsupported Ignition version in Accept header: 4.0.0"}},
		{"Accept: spec 2.1", "GET /config/worker HTTP/1.1\r\n" + ignAccept + "2.1.0", "400 Bad Request",
			[]string{"pool=worker", "spec 2 clients must ask for 2.2 or newer"}},
		{"Accept: a version that is no number", "GET /config/worker HTTP/1.1\r\n" + ignAccept + "banana, */*;q=0.1", "400 Bad Request",
			[]string{"pool=worker", `component \"banana\" is not a number`}},
		{"Accept: a version past int64", "GET /config/worker HTTP/1.1\r\n" + ignAccept + "3.99999999999999999999", "400 Bad Request",
			[]string{"pool=worker", `component \"99999999999999999999\" is not a number`}},
		{"Accept: a negative version", "GET /config/worker HTTP/1.1\r\n" + ignAccept + "-3.4", "400 Bad Request",
			[]string{"pool=worker", "is not a number"}},
		{"unknown pool", "GET /config/nope HTTP/1.1", "404 Not Found", nil},
		{"pool name ..", "GET /config/.. HTTP/1.1", "404 Not Found", nil},
		{"pool name %2e%2e", "GET /config/%2e%2e HTTP/1.1", "404 Not Found", nil},
		{"pool name ../worker, encoded", "GET /config/%2e%2e%2fworker HTTP/1.1", "404 Not Found", nil},
		{"pool name with an encoded NUL", "GET /config/worker%00 HTTP/1.1", "404 Not Found", nil},
		{"pool name with a raw NUL", "GET /config/worker\x00 HTTP/1.1", "400 Bad Request", nil},
		{"pool name with a slash", "GET /config/worker/extra HTTP/1.1", "404 Not Found", nil},
		{"pool name with an encoded slash", "GET /config/worker%2Fextra HTTP/1.1", "404 Not Found", nil},
		{"empty pool name", "GET /config/ HTTP/1.1", "404 Not Found", nil},
		{"very long pool name", "GET /config/" + strings.Repeat("w", 4000) + " HTTP/1.1", "404 Not Found", nil},
		{"pool name past the header limit", "GET /config/" + strings.Repeat("w", 64<<10) + " HTTP/1.1", "431 Request Header Fields Too Large", nil},
		{"oversized header", "GET /config/worker HTTP/1.1\r\nCookie: " + strings.Repeat("c", 64<<10), "431 Request Header Fields Too Large", nil},
		{"many headers", "GET /config/worker HTTP/1.1" + strings.Repeat("\r\nX-Flood: "+strings.Repeat("f", 100), 1000), "431 Request Header Fields Too Large", nil},
		{"POST", "POST /config/worker HTTP/1.1\r\nContent-Length: 4\r\n\r\nevil", "405 Method Not Allowed", nil},
		{"DELETE", "DELETE /config/worker HTTP/1.1", "405 Method Not Allowed", nil},
		{"TRACE", "TRACE /config/worker HTTP/1.1", "405 Method Not Allowed", nil},
		{"lower-case method", "get /config/worker HTTP/1.1", "405 Method Not Allowed", nil},
	}
	var cases []hostileCase
	for _, r := range rows {
		want := append([]string{"HTTP " + r.status}, r.log...)
		if len(r.log) == 0 {
			want = append(want, "no config in the body")
		}
		cases = append(cases, hostileCase{
			entry: "mco server (server.Listen)", name: r.name, want: want,
			run: func(t *testing.T) error { return serverRefuses(t, r) },
		})
	}
	return cases
}

func serverRefuses(t *testing.T, r serverCase) error {
	addr, logs := startServer(t)
	req := r.request
	if !strings.Contains(req, "\r\n\r\n") {
		req += "\r\n\r\n"
	}
	// With the pool's token: what is refused is the input, not the caller.
	req = strings.Replace(req, " HTTP/1.1\r\n", " HTTP/1.1\r\nHost: mcs\r\nConnection: close\r\nAuthorization: Bearer "+poolToken+"\r\n", 1)
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	must(t, err)
	defer conn.Close()
	must(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	// A server may answer and close before reading all of a flood; the answer is what counts.
	_, _ = io.WriteString(conn, req)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no HTTP response: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if bytes.Contains(body, []byte("ignition")) {
		t.Errorf("the response carries a config: %.200s", body)
	}
	// The handler's own refusals are empty (Go's server writes a line of text for what it
	// refuses before the handler: a malformed request line, too large a header).
	if handlerRefused := resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed || len(r.log) > 0; handlerRefused && len(body) > 0 {
		t.Errorf("the refusal has a body: %q", body)
	}
	if resp.StatusCode == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("405 without Allow: GET, HEAD (got %q)", resp.Header.Get("Allow"))
	}
	result := fmt.Sprintf("HTTP %s", resp.Status)
	if resp.StatusCode >= 400 && !bytes.Contains(body, []byte("ignition")) {
		result += ", no config in the body"
	}
	return fmt.Errorf("%s; server log: %s", result, logs.String())
}

// startServer serves the worker pool's rendered config on a real listener, bound as `mco
// server` binds it (server.Listen with its default header and connection limits).
func startServer(t *testing.T) (addr string, logs *testenv.LogBuffer) {
	t.Helper()
	pool := testPool("worker")
	res, err := render.Render(pool, []*mcfgv1.MachineConfig{machineConfig("00-worker-base", "worker", baseConfig)}, render.Options{})
	must(t, err)
	store := server.NewStore(time.Minute)
	store.Replace(map[string]server.PoolState{"worker": {Served: server.ServedInput{Config: res.Config}, Key: res.Config.Name,
		Tokens: &server.PoolTokens{Token: poolToken}}})
	logs = &testenv.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	l, err := server.Listen(server.ListenOptions{InsecureAddress: "127.0.0.1:0"})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Serve(ctx, server.NewHandler(store, server.NewMetrics(nil), log), log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return l.Insecure.Addr().String(), logs
}

const poolToken = "hostile-token"
