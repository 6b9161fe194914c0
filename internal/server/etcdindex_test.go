package server

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// templatedConfig is a master config as seed 003 describes one: an etcd member whose unit,
// dropin and a file name the member by its index, beside a file without templates.
const templatedConfig = `{"ignition":{"version":"3.4.0"},
 "storage":{"files":[
  {"path":"/etc/etcd/member","contents":{"source":"data:,name%3Detcd-%7B%7B.etcd_index%7D%7D%0A"}},
  {"path":"/etc/motd","contents":{"source":"data:,hi"}}]},
 "systemd":{"units":[{"name":"etcd-member.service","contents":"[Service]\nExecStart=/usr/bin/etcd --name=etcd-{{.etcd_index}}\n",
  "dropins":[{"name":"10-index.conf","contents":"[Service]\nEnvironment=ETCD_INDEX={{.etcd_index}}\n"}]}]}}`

// typoConfig refers to the index, and to a variable that does not exist.
const typoConfig = `{"ignition":{"version":"3.4.0"},"systemd":{"units":[{"name":"etcd-member.service","contents":"--name=etcd-{{.etcd_index}}{{.etcd_idx}}"}]}}`

func TestBuildTemplatedServedConfig(t *testing.T) {
	in := ServedInput{Config: testMC(t, templatedConfig), Extras: Extras{Kubeconfig: []byte("user: {{.etcd_index}}\n")}}
	served, err := BuildTemplatedServedConfig(in, ignition.V3_4, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ignition.Parse(served)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(fileBytes(t, cfg, "/etc/etcd/member")); got != "name=etcd-2\n" {
		t.Errorf("member file = %q", got)
	}
	unit := cfg.Systemd.Units[0]
	if *unit.Contents != "[Service]\nExecStart=/usr/bin/etcd --name=etcd-2\n" || *unit.Dropins[0].Contents != "[Service]\nEnvironment=ETCD_INDEX=2\n" {
		t.Errorf("unit %q, dropin %q", *unit.Contents, *unit.Dropins[0].Contents)
	}
	if got := string(fileBytes(t, cfg, etcdindex.IndexPath)); got != "2\n" {
		t.Errorf("%s = %q, want the index for the agent", etcdindex.IndexPath, got)
	}
	// What the server adds is never executed, and the content copy is the MachineConfig as stored.
	if got := string(fileBytes(t, cfg, KubeconfigPath)); got != "user: {{.etcd_index}}\n" {
		t.Errorf("kubeconfig = %q, executed as a template", got)
	}
	if !strings.Contains(string(fileBytes(t, cfg, MachineConfigCopyPath)), "{{.etcd_index}}") {
		t.Error("the content copy is not the stored MachineConfig")
	}

	plain, err := BuildServedConfig(in, ignition.V3_4)
	if err != nil {
		t.Fatal(err)
	}
	plainCfg, err := ignition.Parse(plain)
	if err != nil {
		t.Fatal(err)
	}
	if findFile(plainCfg, etcdindex.IndexPath).Path != "" || !strings.Contains(*plainCfg.Systemd.Units[0].Contents, "{{.etcd_index}}") {
		t.Error("the plain build is templated")
	}

	t.Run("a config without templates differs only by the index file", func(t *testing.T) {
		in := ServedInput{Config: testMC(t, oneFile)}
		plain, err := BuildServedConfig(in, ignition.V3_4)
		must(t, err)
		templated, err := BuildTemplatedServedConfig(in, ignition.V3_4, 0)
		must(t, err)
		templatedCfg, err := ignition.Parse(templated)
		must(t, err)
		plainCfg, err := ignition.Parse(plain)
		must(t, err)
		var rest []string
		for _, f := range templatedCfg.Storage.Files {
			if f.Path != etcdindex.IndexPath {
				rest = append(rest, f.Path+"="+*f.Contents.Source)
			}
		}
		var want []string
		for _, f := range plainCfg.Storage.Files {
			want = append(want, f.Path+"="+*f.Contents.Source)
		}
		if strings.Join(rest, "\n") != strings.Join(want, "\n") {
			t.Errorf("files differ beyond the index file:\n%s\n---\n%s", rest, want)
		}
	})

	t.Run("a template that fails fails the build, naming config, index and unit", func(t *testing.T) {
		_, err := BuildTemplatedServedConfig(ServedInput{Config: testMC(t, typoConfig)}, ignition.V3_4, 0)
		var tmplErr *etcdindex.Error
		if !errors.As(err, &tmplErr) {
			t.Fatalf("err = %v, want an *etcdindex.Error", err)
		}
		for _, want := range []string{"rendered-worker-abc with etcd_index 0", `unit "etcd-member.service"`, `.etcd_idx is not etcd_index, the only variable`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not say %q: %v", want, err)
			}
		}
	})
}

func TestHandlerEtcdIndex(t *testing.T) {
	var logs bytes.Buffer
	pool := func(name string, annotations map[string]string) *mcfgv1.MachineConfigPool {
		return &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	}
	enable := map[string]string{protocol.EtcdIndexTemplatingAnnotation: "true"}
	state := func(config string, p *mcfgv1.MachineConfigPool) PoolState {
		return PoolState{Served: ServedInput{Config: testMC(t, config)}, Key: "k", Tokens: &PoolTokens{Token: "t"}, EtcdIndex: EtcdIndexOf(p)}
	}
	store := NewStore(time.Minute)
	store.Replace(map[string]PoolState{
		"master":        state(templatedConfig, pool("master", nil)),
		"worker":        state(templatedConfig, pool("worker", nil)),
		"infra":         state(templatedConfig, pool("infra", enable)),
		"opted-out":     state(templatedConfig, pool("master", map[string]string{protocol.EtcdIndexTemplatingAnnotation: "false"})),
		"misconfigured": state(templatedConfig, pool("misconfigured", map[string]string{protocol.EtcdIndexTemplatingAnnotation: "yes"})),
		"typo":          state(typoConfig, pool("typo", enable)),
	})
	metrics := NewMetrics(nil)
	h := NewHandler(store, metrics, slog.New(slog.NewTextHandler(&logs, nil)))
	get := func(method, path string, header ...string) (int, string, string) {
		rec := do(h, method, path, append([]string{"Authorization", "Bearer t", "Accept", accept34}, header...)...)
		return rec.Code, rec.Body.String(), rec.Header().Get("Content-Type")
	}
	plain := func(pool string) string {
		resp, err := store.Get(pool).response(ignition.V3_4)
		must(t, err)
		return string(resp.body)
	}
	const unitAt = `--name=etcd-%d\n`

	tests := []struct {
		name, method, path string
		code               int
		// body: "plain" = exactly the pool's bytes without templating; "index N" = templated
		// with N; anything else must appear in a text/plain reason.
		body string
	}{
		{"master templates", "GET", "/config/master?etcd_index=1", 200, "index 1"},
		{"master, index 0", "GET", "/config/master?etcd_index=0", 200, "index 0"},
		{"leading zeros are the same index", "GET", "/config/master?etcd_index=007", 200, "index 7"},
		{"HEAD templates too", "HEAD", "/config/master?etcd_index=1", 200, ""},
		{"master without the parameter", "GET", "/config/master", 200, "plain"},
		{"master with other parameters only", "GET", "/config/master?foo=1", 200, "plain"},
		{"worker ignores the parameter", "GET", "/config/worker?etcd_index=1", 200, "plain"},
		{"worker ignores a malformed one too", "GET", "/config/worker?etcd_index=abc", 200, "plain"},
		{"a pool that opts in", "GET", "/config/infra?etcd_index=3", 200, "index 3"},
		{"master that opts out", "GET", "/config/opted-out?etcd_index=3", 200, "plain"},
		{"negative", "GET", "/config/master?etcd_index=-1", 400, `etcd_index "-1" is negative; it must be a non-negative integer`},
		{"not a number", "GET", "/config/master?etcd_index=abc", 400, `etcd_index "abc" is not a non-negative integer`},
		{"empty", "GET", "/config/master?etcd_index=", 400, "etcd_index is empty"},
		{"too large", "GET", "/config/master?etcd_index=2147483648", 400, "is larger than 2147483647"},
		{"given twice", "GET", "/config/master?etcd_index=1&etcd_index=2", 400, "etcd_index is given 2 times; give it once"},
		{"malformed query", "GET", "/config/master?etcd_index=%zz", 400, `invalid URL escape "%zz"`},
		{"HEAD of a refusal has no body", "HEAD", "/config/master?etcd_index=-1", 400, ""},
		{"misconfigured pool with the parameter", "GET", "/config/misconfigured?etcd_index=1", 500,
			`MachineConfigPool misconfigured: annotation machineconfiguration.openshift.io/etcd-index-templating: "yes" is neither "true" nor "false"`},
		{"misconfigured pool without it", "GET", "/config/misconfigured", 200, "plain"},
		{"a template that fails", "GET", "/config/typo?etcd_index=0", 500, `unit "etcd-member.service": template: etcd-member.service:1:29: .etcd_idx is not etcd_index, the only variable`},
		{"the failing config without the parameter", "GET", "/config/typo", 200, "plain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pool := strings.TrimPrefix(strings.SplitN(tc.path, "?", 2)[0], "/config/")
			requestsBefore := testutil.ToFloat64(metrics.requests.WithLabelValues(pool, statusText(tc.code), "3.4.0"))
			failuresBefore := testutil.ToFloat64(metrics.templateFailures.WithLabelValues(pool))
			logs.Reset()
			code, body, contentType := get(tc.method, tc.path)
			if code != tc.code {
				t.Fatalf("code = %d, want %d (body %.200s)", code, tc.code, body)
			}
			var index int
			switch _, err := fmt.Sscanf(tc.body, "index %d", &index); {
			case tc.body == "":
				if body != "" {
					t.Errorf("body = %.100q, want none", body)
				}
			case tc.body == "plain":
				if body != plain(pool) {
					t.Errorf("not the plain bytes: %.300s", body)
				}
				if strings.Contains(body, etcdindex.IndexPath) {
					t.Error("the plain bytes carry the index file")
				}
			case err == nil:
				if !strings.Contains(body, fmt.Sprintf(unitAt, index)) || strings.Contains(body, "{{.etcd_index}}") {
					t.Errorf("not templated with %d: %.600s", index, body)
				}
			default:
				if contentType != "text/plain; charset=utf-8" || !strings.Contains(body, tc.body) {
					t.Errorf("reason (%s) = %q, want one containing %q", contentType, body, tc.body)
				}
				if !strings.Contains(logs.String(), strings.ReplaceAll(tc.body, `"`, `\"`)) {
					t.Errorf("the log does not give the reason:\n%s", logs.String())
				}
			}
			if got := testutil.ToFloat64(metrics.requests.WithLabelValues(pool, statusText(tc.code), "3.4.0")); got != requestsBefore+1 {
				t.Errorf("mcs_config_requests_total{code=%d} went from %v to %v", tc.code, requestsBefore, got)
			}
			wantFailures := failuresBefore
			if pool == "typo" && tc.code == 500 {
				wantFailures++
			}
			if got := testutil.ToFloat64(metrics.templateFailures.WithLabelValues(pool)); got != wantFailures {
				t.Errorf("mcs_config_template_failures_total = %v, want %v", got, wantFailures)
			}
		})
	}

	t.Run("each index has its own ETag", func(t *testing.T) {
		etag := func(path string, header ...string) (int, string) {
			rec := do(h, "GET", path, append([]string{"Authorization", "Bearer t", "Accept", accept34}, header...)...)
			return rec.Code, rec.Header().Get("Etag")
		}
		_, one := etag("/config/master?etcd_index=1")
		_, two := etag("/config/master?etcd_index=2")
		_, none := etag("/config/master")
		if one == "" || one == two || one == none {
			t.Fatalf("ETags: index 1 %s, index 2 %s, plain %s", one, two, none)
		}
		if code, _ := etag("/config/master?etcd_index=1", "If-None-Match", one); code != 304 {
			t.Errorf("If-None-Match of index 1: %d, want 304", code)
		}
		if code, _ := etag("/config/master?etcd_index=2", "If-None-Match", one); code != 200 {
			t.Errorf("index 1's ETag matched index 2: %d", code)
		}
	})
}

func TestTemplatedResponsesAreCachedAndBounded(t *testing.T) {
	store := NewStore(time.Minute)
	mc := testMC(t, templatedConfig)
	store.Replace(map[string]PoolState{"master": {Served: ServedInput{Config: mc}, Key: "v1"}})
	entry := store.Get("master")
	first, err := entry.templatedResponse(ignition.V3_4, 1)
	must(t, err)
	if again, _ := entry.templatedResponse(ignition.V3_4, 1); again != first {
		t.Error("the same (config, index, spec) was built twice")
	}
	if other, _ := entry.templatedResponse(ignition.V3_4, 2); other == first || string(other.body) == string(first.body) {
		t.Error("index 2 got index 1's response")
	}
	if spec35, _ := entry.templatedResponse(ignition.V3_5, 1); spec35 == first {
		t.Error("spec 3.5 got 3.4's response")
	}
	if plain, _ := entry.response(ignition.V3_4); plain == first {
		t.Error("the plain response is the templated one")
	}

	t.Log("an unchanged key keeps the templated responses, a changed one drops them")
	store.Replace(map[string]PoolState{"master": {Served: ServedInput{Config: mc}, Key: "v1"}})
	if kept, _ := store.Get("master").templatedResponse(ignition.V3_4, 1); kept != first {
		t.Error("an unchanged key rebuilt the templated response")
	}
	store.Replace(map[string]PoolState{"master": {Served: ServedInput{Config: mc}, Key: "v2"}})
	entry = store.Get("master")
	rebuilt, err := entry.templatedResponse(ignition.V3_4, 1)
	must(t, err)
	if rebuilt == first {
		t.Error("a changed key kept the templated response")
	}

	t.Log("at most maxTemplatedResponses are kept; the oldest goes first")
	for i := 2; i <= maxTemplatedResponses+1; i++ {
		_, err := entry.templatedResponse(ignition.V3_4, i)
		must(t, err)
	}
	if n := len(entry.builds.templated); n != maxTemplatedResponses {
		t.Errorf("%d templated responses kept, want %d", n, maxTemplatedResponses)
	}
	if again, _ := entry.templatedResponse(ignition.V3_4, 1); again == rebuilt || string(again.body) != string(rebuilt.body) {
		t.Error("the oldest response was not dropped, or came back different")
	}

	t.Log("concurrent first requests for one index build once")
	var wg sync.WaitGroup
	got := make([]*response, 16)
	for i := range got {
		wg.Go(func() { got[i], _ = entry.templatedResponse(ignition.V3_2, 99) })
	}
	wg.Wait()
	for _, r := range got {
		if r == nil || r != got[0] {
			t.Fatal("concurrent first requests got different builds")
		}
	}
}
