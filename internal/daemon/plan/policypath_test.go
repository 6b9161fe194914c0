package plan

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	operatorv1 "github.com/openshift/api/operator/v1"
)

// TestFilePolicyMatchesOpenShift: for every set of policy paths and changed file in
// testdata/openshift/policy-paths.json, the policy that applies is the one OpenShift picks.
// "openshift" there is the index OpenShift's FindClosestFilePolicyPathMatch
// (pkg/controller/common) returned for the case, -1 for none (testdata/openshift/README.md).
// Among them: "/" and "" cover nothing, and paths OpenShift cleans ("/etc/foo/../bar",
// "//etc/foo", "/etc/foo/.") cover what is below them once cleaned.
func TestFilePolicyMatchesOpenShift(t *testing.T) {
	data, err := os.ReadFile("testdata/openshift/policy-paths.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Paths []struct {
			Policies  []string `json:"policies"`
			Path      string   `json:"path"`
			OpenShift *int     `json:"openshift"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Paths) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range golden.Paths {
		if c.OpenShift == nil {
			t.Fatalf("case %q %q has no OpenShift verdict", c.Policies, c.Path)
		}
		var p Policies
		for i, path := range c.Policies {
			p.Files = append(p.Files, FilePolicy{Path: path, Actions: []Action{reload(strconv.Itoa(i))}})
		}
		got := -1
		if fp, ok := p.filePolicy(c.Path); ok {
			got, _ = strconv.Atoi(fp.Actions[0].Unit)
		}
		if got != *c.OpenShift {
			t.Errorf("policies %q, file %s: matched policy %d, OpenShift %d", c.Policies, c.Path, got, *c.OpenShift)
		}
	}
}

// A policy for "/" (or "") does not make every change rebootless: the file falls back to the
// reboot of a file without a policy, as in OpenShift, and the plan says why.
func TestRootPolicyCoversNothing(t *testing.T) {
	for _, path := range []string{"/", ""} {
		p := PoliciesFrom(&operatorv1.NodeDisruptionPolicyConfig{Files: []operatorv1.NodeDisruptionPolicySpecFile{
			{Path: path, Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.NoneSpecAction}}},
		}})
		got := Compute(Diff{Files: []string{"/etc/motd"}}, p)
		if !got.NeedsReboot() {
			t.Errorf("policy %q: plan %v, want a reboot", path, got)
		}
		if rule := got.Causes[0].Rule; !strings.Contains(rule, strconv.Quote(path)+" cover no file") {
			t.Errorf("policy %q: rule %q does not say the policy covers nothing", path, rule)
		}
	}
}
