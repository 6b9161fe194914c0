package changeplan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/plan"
)

func rebootPlan(kargs []string, files ...string) *Plan {
	p := &Plan{Drain: true, Reboot: true, Actions: []string{"Reboot"}, Disruption: "drain+reboot"}
	if len(kargs) > 0 {
		p.KernelArguments = &KernelArguments{Added: kargs}
		p.Causes = append(p.Causes, Cause{Change: "kernelArguments", Rule: "always needs a reboot", Actions: []string{"Reboot"}})
	}
	for _, f := range files {
		p.Causes = append(p.Causes, Cause{Change: "file " + f, Rule: "no file policy matches", Actions: []string{"Reboot"}})
	}
	return p
}

func livePlan(actions ...string) *Plan {
	p := &Plan{Actions: actions}
	for _, a := range actions {
		p.Causes = append(p.Causes, Cause{Change: "file /etc/containers/policy.json", Rule: "file policy", Actions: []string{a}})
	}
	return p
}

func TestUnpausing(t *testing.T) {
	manyFiles := make([]string, 300)
	for i := range manyFiles {
		manyFiles[i] = fmt.Sprintf("/etc/app/%03d.conf", i)
	}
	drainPlan := &Plan{Drain: true, Actions: []string{"Drain", "Reload crio.service"}, Causes: []Cause{
		{Change: "file /etc/containers/registries.conf", Rule: "file policy /etc/containers/registries.conf (Special: drain, a mirror was removed)", Actions: []string{"Drain", "Reload crio.service"}},
	}}
	cases := []struct {
		name        string
		groups      []Group
		wantReason  string
		wantMessage string
	}{
		{
			name:       "nothing pending gives no verdict",
			wantReason: "", wantMessage: "",
		},
		{
			name:        "kernel argument and file reboot, restart elsewhere",
			groups:      []Group{{Current: "rendered-a", Nodes: 12, Plan: rebootPlan([]string{"audit=1"}, "/etc/motd")}, {Current: "rendered-b", Nodes: 3, Plan: livePlan("Restart crio.service")}},
			wantReason:  ReasonDrainAndReboot,
			wantMessage: "unpausing reboots 12 nodes: kernel argument audit=1, file /etc/motd; changes nothing on 3 nodes that needs a drain or reboot: restart crio.service",
		},
		{
			name:        "reload only",
			groups:      []Group{{Current: "rendered-a", Nodes: 4, Plan: livePlan("Reload crio.service")}},
			wantReason:  ReasonNoDisruption,
			wantMessage: "unpausing changes nothing on 4 nodes that needs a drain or reboot: reload crio.service",
		},
		{
			name:        "daemon-reload and none worded as systemctl",
			groups:      []Group{{Current: "rendered-a", Nodes: 1, Plan: livePlan("DaemonReload", "Restart a.service")}, {Current: "rendered-b", Nodes: 1, Plan: livePlan("None")}},
			wantReason:  ReasonNoDisruption,
			wantMessage: "unpausing changes nothing on 2 nodes that needs a drain or reboot: daemon-reload, restart a.service, no further action",
		},
		{
			name:        "refused wins over reboot",
			groups:      []Group{{Current: "rendered-a", Nodes: 5, Plan: rebootPlan([]string{"audit=1"})}, {Current: "rendered-b", Nodes: 2, Plan: &Plan{Reboot: true, Drain: true, Unreconcilable: []string{"storage.disks: changing disks is not supported on a running node"}}}},
			wantReason:  ReasonRefused,
			wantMessage: "unpausing is refused for 2 nodes: storage.disks: changing disks is not supported on a running node; reboots 5 nodes: kernel argument audit=1",
		},
		{
			name:        "refused by the agent",
			groups:      []Group{{Current: "rendered-a", Nodes: 3, Plan: &Plan{Drain: true, Refused: []string{"the new config's /etc/containers/registries.conf cannot be read by containers/image"}}}},
			wantReason:  ReasonRefused,
			wantMessage: "unpausing is refused for 3 nodes: the new config's /etc/containers/registries.conf cannot be read by containers/i…",
		},
		{
			name:        "drain without reboot",
			groups:      []Group{{Current: "rendered-a", Nodes: 1, Plan: drainPlan}},
			wantReason:  ReasonDrain,
			wantMessage: "unpausing drains 1 node: file /etc/containers/registries.conf",
		},
		{
			name:        "unplanned group, reboot in the rest",
			groups:      []Group{{Current: "rendered-gone", Nodes: 1, Err: "rendered config rendered-gone not found"}, {Current: "rendered-a", Nodes: 2, Plan: rebootPlan(nil, "/etc/motd")}},
			wantReason:  ReasonDrainAndReboot,
			wantMessage: "unpausing reboots 2 nodes: file /etc/motd; cannot be planned for 1 node: rendered config rendered-gone not found",
		},
		{
			name: "groups of one outcome add up and share causes once, largest group first",
			groups: []Group{
				{Current: "rendered-small", Nodes: 2, Plan: rebootPlan([]string{"quiet"}, "/etc/motd")},
				{Current: "rendered-big", Nodes: 10, Plan: rebootPlan([]string{"audit=1"}, "/etc/motd")},
			},
			wantReason:  ReasonDrainAndReboot,
			wantMessage: "unpausing reboots 12 nodes: kernel argument audit=1, file /etc/motd, kernel argument quiet",
		},
		{
			name:        "300 files on 500 nodes name three and count the rest",
			groups:      []Group{{Current: "rendered-a", Nodes: 500, Plan: rebootPlan(nil, manyFiles...)}},
			wantReason:  ReasonDrainAndReboot,
			wantMessage: "unpausing reboots 500 nodes: file /etc/app/000.conf, file /etc/app/001.conf, file /etc/app/002.conf, and 297 more",
		},
		{
			name:        "a long cause is cut and folded to one line",
			groups:      []Group{{Current: "rendered-a", Nodes: 1, Plan: &Plan{Unreconcilable: []string{"storage.files:\n" + strings.Repeat("x", 200)}}}},
			wantReason:  ReasonRefused,
			wantMessage: "unpausing is refused for 1 node: storage.files: " + strings.Repeat("x", 64) + "…",
		},
		{
			name:        "kernel argument removed",
			groups:      []Group{{Current: "rendered-a", Nodes: 3, Plan: &Plan{Reboot: true, Drain: true, KernelArguments: &KernelArguments{Removed: []string{"nosmt"}}, Causes: []Cause{{Change: "kernelArguments", Actions: []string{"Reboot"}}}}}},
			wantReason:  ReasonDrainAndReboot,
			wantMessage: "unpausing reboots 3 nodes: kernel argument nosmt removed",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Unpausing(tc.groups)
			if got.Reason != tc.wantReason || got.Message != tc.wantMessage {
				t.Errorf("Unpausing() =\n  %s: %q\nwant\n  %s: %q", got.Reason, got.Message, tc.wantReason, tc.wantMessage)
			}
		})
	}
}

// TestUnpausingBounded: however many groups and changes, the message stays short.
func TestUnpausingBounded(t *testing.T) {
	var groups []Group
	for i := range 50 {
		files := make([]string, 300)
		for j := range files {
			files[j] = fmt.Sprintf("/etc/%s/%03d.conf", strings.Repeat("d", 200), j)
		}
		groups = append(groups,
			Group{Current: fmt.Sprintf("rendered-r%02d", i), Nodes: 10, Plan: rebootPlan([]string{fmt.Sprintf("arg%d=1", i)}, files...)},
			Group{Current: fmt.Sprintf("rendered-u%02d", i), Nodes: 1, Plan: &Plan{Unreconcilable: []string{strings.Repeat("why ", 500)}}},
			Group{Current: fmt.Sprintf("rendered-l%02d", i), Nodes: 2, Plan: livePlan(fmt.Sprintf("Restart u%d.service", i))},
			Group{Current: fmt.Sprintf("rendered-e%02d", i), Nodes: 1, Err: strings.Repeat("error ", 300)},
		)
	}
	v := Unpausing(groups)
	if n := len(v.Message); n > 1500 {
		t.Errorf("message is %d bytes, want at most 1500: %s", n, v.Message)
	}
	for _, want := range []string{"is refused for 50 nodes", "reboots 500 nodes", "cannot be planned for 50 nodes", "on 100 nodes", "more"} {
		if !strings.Contains(v.Message, want) {
			t.Errorf("message lacks %q: %s", want, v.Message)
		}
	}
}

// TestUnpausingFromBetween condenses real plans, so a change in how Between names causes
// (kernelArguments, file paths) shows here.
func TestUnpausingFromBetween(t *testing.T) {
	current := mc(t, "rendered-worker-old", files(file("/etc/motd", "hello\n")))
	reboots := mc(t, "rendered-worker-new", files(file("/etc/motd", "hello again\n")), "audit=1")
	p, err := Between("worker", current, reboots, plan.DefaultPolicies())
	if err != nil {
		t.Fatal(err)
	}
	got := Unpausing([]Group{{Current: current.Name, Nodes: 12, Plan: p}})
	want := Verdict{Reason: ReasonDrainAndReboot, Message: "unpausing reboots 12 nodes: kernel argument audit=1, file /etc/motd"}
	if got != want {
		t.Errorf("Unpausing(Between(...)) = %+v, want %+v", got, want)
	}

	// /etc/containers/policy.json has a default policy without drain or reboot.
	withPolicy := mc(t, "rendered-worker-policy", files(file("/etc/motd", "hello\n"), file("/etc/containers/policy.json", "{}\n")))
	p, err = Between("worker", current, withPolicy, plan.DefaultPolicies())
	if err != nil {
		t.Fatal(err)
	}
	got = Unpausing([]Group{{Current: current.Name, Nodes: 4, Plan: p}})
	if got.Reason != ReasonNoDisruption || !strings.HasPrefix(got.Message, "unpausing changes nothing on 4 nodes that needs a drain or reboot: ") {
		t.Errorf("Unpausing(policy.json change) = %+v, want NoDisruption on 4 nodes", got)
	}
}
