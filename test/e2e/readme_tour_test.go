package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
	"github.com/mco-dev/mco/test/doctest"
)

// readmeSession is where README's blocks run against the dev cluster cl, linked as
// _out/<name>, with its install settings for the install steps' placeholders: `<registry>/mco`
// and `<tag>` name the image mco dev up loaded, `<serverHost>` and `<apiServerURL>` are what
// `mco dev status` prints.
func readmeSession(t *testing.T, cl *clustertest.Cluster, name string) *doctest.Session {
	t.Helper()
	s := doctest.NewSession(t, map[string]string{name: cl.Dir}, filepath.Join(cl.Dir, "kubeconfig"))
	st, err := devcluster.LoadState(cl.Dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := devcluster.InstallSettings(st)
	if err != nil {
		t.Fatal(err)
	}
	repo, tag, _ := strings.Cut(set.Image, ":")
	s.Subst["<registry>/mco"] = repo
	s.Subst["<tag>"] = tag
	s.Subst["<serverHost>"] = set.ServerHost
	s.Subst["<apiServerURL>"] = set.APIServerURL
	s.Subst["<podNetworks>"] = set.PodNetworks
	return s
}

// readmeTour runs README's tour (and the docs' commands for a running cluster) on the cluster
// TestRealMachines brought to where `make demo` leaves its own: the examples applied, worker-3
// joined. Each block runs as written; what it changes is checked by the blocks themselves
// (their waits and shown output) and here where they do not show it.
func readmeTour(t *testing.T, ctx context.Context, cl *clustertest.Cluster, s *doctest.Session) {
	for _, id := range []string{"demo-look", "plan-chrony", "explain-drift", "explain-drift-undo", "explain-usage",
		"pacing-policy", "pacing-canary", "pacing-delete", "rollout-undo", "rollout-forward", "hold", "diagnose-bundle"} {
		s.Run(t, id)
	}
	for _, n := range []string{"worker-0", "worker-1", "worker-2", "worker-3"} {
		if got := cl.NodeFile(ctx, n, "/home/core/.ssh/authorized_keys.d/ignition"); !strings.Contains(got, "oncall@example.com") {
			t.Errorf("%s: after the tour's rollout, undo and resume core's keys are %q, want the on-call key", n, got)
		}
		if a := cl.Node(t, ctx, n).Annotations; a["rollout.mco.dev/hold"] != "" {
			t.Errorf("%s is still held after `mco hold --undo`", n)
		}
	}

	// The runbooks' first steps, for an alert on worker-0 of pool worker (the placeholders of
	// the alert's labels).
	s.Subst["<node>"], s.Subst["<pool>"] = "worker-0", "worker"
	for _, id := range []string{"runbook-kubelethealthstate", "runbook-mccdrainerror", "runbook-mcdconfigdriftdetected",
		"runbook-mcddriftwatchdegraded", "runbook-mcdpivoterror", "runbook-mcdrebooterror", "runbook-mcobootimageupdatedegraded",
		"runbook-mcodrainblockedbypdb", "runbook-mconodeunresponsive", "runbook-mcopooldegraded", "runbook-mcorolloutstalled",
		"runbook-mcsconfigrequestsrefused", "runbook-mcstemplatefailures"} {
		s.Run(t, id)
	}

	// Install on a cluster: the same overlay again over the running install changes nothing
	// that breaks it; the pools stay Updated and the server refuses a client without a token.
	for _, id := range []string{"install-default", "user-data", "install-check"} {
		s.Run(t, id)
	}
	var ign struct {
		Ignition struct {
			Version string `json:"version"`
			Config  struct {
				Merge []struct {
					Source string `json:"source"`
				} `json:"merge"`
			} `json:"config"`
		} `json:"ignition"`
	}
	data, err := os.ReadFile(filepath.Join(s.Dir, "worker.ign"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ign); err != nil || ign.Ignition.Version == "" || len(ign.Ignition.Config.Merge) != 1 ||
		!strings.HasSuffix(ign.Ignition.Config.Merge[0].Source, "/config/worker") {
		t.Errorf("worker.ign is not the worker pool's pointer config (%v): %s", err, data)
	}
}

// readmeMonitoring adds README's monitoring to the install the tour made (my-mco), with the
// Prometheus Operator's CRDs installed first as a user with the operator has them (make tools
// puts them in bin/tools/crds, pinned): the API server validates the PodMonitors and the rules
// against the operator's schemas, and the server's and agents' pods restart listening for
// metrics on their node's address.
func readmeMonitoring(t *testing.T, ctx context.Context, cl *clustertest.Cluster, s *doctest.Session) {
	kubectl := testenv.RequireTool(t, "kubectl")
	crds := filepath.Join(testenv.ToolsDir(), "crds")
	for _, args := range [][]string{{"apply", "--server-side", "-f", crds}, {"wait", "--for", "condition=established", "--timeout=60s", "crd", "--all"}} {
		if out, err := clustertest.Run(ctx, kubectl, append([]string{"--kubeconfig", filepath.Join(cl.Dir, "kubeconfig")}, args...)...); err != nil {
			t.Fatalf("the Prometheus Operator's CRDs (run make tools): %v\n%s", err, out)
		}
	}
	s.Run(t, "monitoring")
	s.Subst["<grafana-ns>"] = "default"
	s.Run(t, "grafana-dashboard")
}
