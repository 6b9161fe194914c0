package bootguard

import (
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	rec := &Record{Node: "w1", From: "rendered-worker-a", To: "rendered-worker-b", Timeout: Duration{10 * time.Minute}}
	ok := Check{OK: true}
	down := Check{Evidence: "no kubelet process is running"}
	notReady := Check{Evidence: "Node w1 Ready=False: container runtime network not ready"}
	for _, tc := range []struct {
		name  string
		facts Facts
		want  Action
		check string // Failure.Check for Revert
		evid  string
	}{
		{"nothing armed", Facts{Committed: "rendered-worker-b", Kubelet: down}, Nothing, "", ""},
		{"still the armed boot", Facts{Record: rec, Committed: "rendered-worker-b", RebootPending: "rendered-worker-b", SinceBoot: time.Hour, Kubelet: down}, Nothing, "", ""},
		{"update rolled back", Facts{Record: rec, Committed: "rendered-worker-a", SinceBoot: time.Hour, Kubelet: down}, Disarm, "", ""},
		{"node moved on", Facts{Record: rec, Committed: "rendered-worker-c", SinceBoot: time.Hour, Kubelet: down}, Disarm, "", ""},
		{"already failed once", Facts{Record: rec, Committed: "rendered-worker-b", FailedFor: "rendered-worker-b", SinceBoot: time.Hour, Kubelet: down}, Disarm, "", ""},
		{"an older failure does not stop it", Facts{Record: rec, Committed: "rendered-worker-b", FailedFor: "rendered-worker-x", SinceBoot: time.Hour, Kubelet: down}, Revert,
			"kubelet not healthy within 10m0s after the reboot into rendered-worker-b", "no kubelet process is running"},
		{"healthy", Facts{Record: rec, Committed: "rendered-worker-b", SinceBoot: time.Minute, Kubelet: ok, Node: ok}, Disarm, "", ""},
		{"healthy even late", Facts{Record: rec, Committed: "rendered-worker-b", SinceBoot: time.Hour, Kubelet: ok, Node: ok}, Disarm, "", ""},
		{"kubelet down, in time", Facts{Record: rec, Committed: "rendered-worker-b", SinceBoot: 9 * time.Minute, Kubelet: down}, Wait, "", ""},
		{"not Ready, in time", Facts{Record: rec, Committed: "rendered-worker-b", SinceBoot: 9 * time.Minute, Kubelet: ok, Node: notReady}, Wait, "", ""},
		{"kubelet down at the timeout", Facts{Record: rec, Committed: "rendered-worker-b", SinceBoot: 10 * time.Minute, Kubelet: down}, Revert,
			"kubelet not healthy within 10m0s after the reboot into rendered-worker-b", "no kubelet process is running"},
		{"not Ready after the timeout", Facts{Record: rec, Committed: "rendered-worker-b", SinceBoot: 11 * time.Minute, Kubelet: ok, Node: notReady}, Revert,
			"Node w1 not Ready within 10m0s after the reboot into rendered-worker-b", notReady.Evidence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.facts)
			if d.Action != tc.want {
				t.Fatalf("Decide = %v (%s), want %v", d.Action, d.Why, tc.want)
			}
			if !tc.facts.Guarding() {
				// The guard observes nothing then: the decision must not depend on it.
				healthy := tc.facts
				healthy.Kubelet, healthy.Node = ok, ok
				if h := Decide(healthy); h.Action != d.Action || tc.want == Wait || tc.want == Revert {
					t.Errorf("not Guarding, yet the decision depends on the observation: %v, %v healthy", d.Action, h.Action)
				}
			}
			if d.Why == "" {
				t.Error("no reason given")
			}
			if tc.want != Revert {
				if d.Failure != nil {
					t.Errorf("a failure for %v: %+v", d.Action, d.Failure)
				}
				return
			}
			f := d.Failure
			if f == nil || f.From != "rendered-worker-a" || f.To != "rendered-worker-b" || f.Check != tc.check || f.Evidence != tc.evid {
				t.Fatalf("failure %+v, want check %q evidence %q", f, tc.check, tc.evid)
			}
		})
	}
}

func TestForAgent(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := &Failure{From: "a", To: "b", At: at}
	for _, tc := range []struct {
		name    string
		f       *Failure
		desired string
		retryAt time.Time
		force   bool
		want    AgentVerdict
	}{
		{"no failure", nil, "b", time.Time{}, false, Proceed},
		{"held", f, "b", time.Time{}, false, Hold},
		{"retry before the failure", f, "b", at.Add(-time.Second), false, Hold},
		{"retry at the failure's second", f, "b", at, false, Hold},
		{"retry after", f, "b", at.Add(time.Second), false, Clear},
		{"force file", f, "b", time.Time{}, true, Clear},
		{"target back to the previous", f, "a", time.Time{}, false, Clear},
		{"another target", f, "c", time.Time{}, false, Clear},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ForAgent(tc.f, tc.desired, tc.retryAt, tc.force); got != tc.want {
				t.Errorf("ForAgent = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFailureReason(t *testing.T) {
	f := Failure{From: "rendered-worker-a", To: "rendered-worker-b", Check: "kubelet not healthy within 10m0s after the reboot into rendered-worker-b",
		Evidence: "healthz: connection refused"}
	want := "NodeBootFailed: kubelet not healthy within 10m0s after the reboot into rendered-worker-b (healthz: connection refused); reverted to rendered-worker-a"
	if got := f.Reason(); got != want {
		t.Errorf("Reason =\n%s\nwant\n%s", got, want)
	}
	f.RevertError = "disk full"
	if got := f.Reason(); !strings.HasPrefix(got, "NodeBootFailed: ") || !strings.HasSuffix(got, "; reverting to rendered-worker-a failed, the node is still in rendered-worker-b: disk full") {
		t.Errorf("Reason with a failed revert = %s", got)
	}
}

func TestParseRecord(t *testing.T) {
	good := `{"node":"w1","from":"a","to":"b","timeout":"1m0s","timeoutFrom":"default","armedAt":"2026-01-02T03:04:05Z","previous":{"metadata":{"name":"a"}}}`
	r, err := ParseRecord([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if r.Timeout.Duration != time.Minute || r.From != "a" || r.To != "b" || string(r.Previous) != `{"metadata":{"name":"a"}}` {
		t.Errorf("parsed %+v", r)
	}
	for name, bad := range map[string]string{
		"not JSON":     `{`,
		"no target":    `{"from":"a","timeout":"1m","previous":{}}`,
		"no previous":  `{"from":"a","to":"b","timeout":"1m"}`,
		"no timeout":   `{"from":"a","to":"b","previous":{}}`,
		"zero timeout": `{"from":"a","to":"b","timeout":"0s","previous":{}}`,
		"bad timeout":  `{"from":"a","to":"b","timeout":"soon","previous":{}}`,
		"negative":     `{"from":"a","to":"b","timeout":"-1m","previous":{}}`,
	} {
		if _, err := ParseRecord([]byte(bad)); err == nil || !strings.Contains(err.Error(), RecordPath) && !strings.Contains(err.Error(), "timeout") {
			t.Errorf("%s: err = %v, want one naming the record", name, err)
		}
	}
}

// TestUnit: the unit at its exact content.
func TestUnit(t *testing.T) {
	want := `[Unit]
Description=mco boot guard: revert an update whose reboot leaves the kubelet unhealthy or the Node not Ready
ConditionPathExists=/etc/machine-config-daemon/boot-guard.json
Wants=network-online.target
After=network-online.target

[Service]
Type=exec
ExecStart=/usr/local/bin/mco-boot-guard daemon boot-guard

[Install]
WantedBy=multi-user.target
`
	if Unit != want {
		t.Errorf("Unit =\n%s\nwant\n%s", Unit, want)
	}
}
