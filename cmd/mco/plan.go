//go:build !nodeagent && !mcoserver

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/planview"
	"github.com/mco-dev/mco/internal/problems"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/version"
)

type planFlags struct {
	offline         bool
	files           []string
	current, pool   string
	output, policy  string
	osImageURL      string
	extensionsImage string
	kubeconfig      string
}

func newPlanCommand() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan -f PATH... [--pool NAME] [-o json] [--kubeconfig FILE] | plan --pool NAME | plan --offline -f PATH... --current RENDERED.yaml",
		Short: "Show what a MachineConfig change would do to a pool's nodes before applying it",
		Long: `Plan shows what applying MachineConfigs (and pools) would do, the way the node agent will
compute it: the new rendered config, the disruption (none, reload or restart of units, drain,
drain+reboot, or refused when unreconcilable) under the NodeDisruptionPolicy, kernel-argument
changes, a unified diff of each changed unit and file, and what the controller would refuse as
unreconcilable. Files whose path looks secret (contains secret, token, key, password, passwd,
credential, .pem, kubeconfig, or is /var/lib/kubelet/config.json) and binary files are shown as
sha256 hashes.

Against the cluster (the default), -f holds only the manifests about to be applied: they are
laid over the cluster's MachineConfigs and pools as "kubectl apply" would leave them. Every
pool they touch (or only --pool) is rendered as the controller would (its default OS images
are read off the pools' current rendered configs), and for each group of the pool's nodes
sharing a current config the plan from that config is shown. Nodes mid-update or with a
reboot queued are flagged. The policy is MachineConfiguration cluster's
spec.nodeDisruptionPolicy (or --policy's). What lives only on a node (the force file, a
reboot the agent still owes) cannot be seen and is said so. Without -f, --pool plans the pool
as it stands: its nodes behind its target, and its nodes mco did not boot that wait for
adoption, each with the plan its agent published (every file's diff, the units, the
disruption; ` + "`mco adopt`" + ` approves them).

With --offline, no cluster: -f must hold every MachineConfig of the pool after the change,
and --current the rendered config its nodes run.

Keys Ignition only warns about render as in OpenShift (see "mco validate --help"): the plan
lists them (offline also on stderr, at their file) and they do not change the exit code.

Exit codes: 0 nothing drains or reboots (nodes only waiting for adoption included); 1 a node
would be drained or rebooted (or has a reboot queued, or an approved adoption drains or
reboots it); 2 error, including a pool that does not render and a change the controller
or agent would refuse as unreconcilable.`,
		Example: `  mco plan -f change.yaml
  mco plan --pool worker
  mco plan -f manifests/ --pool infra -o json
  mco plan --offline -f manifests/ --current rendered-worker.yaml
  mco plan --offline -f manifests/ --current rendered-infra.yaml --pool infra -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runPlan(cmd, f); err != nil {
				var ee *exitError
				if errors.As(err, &ee) {
					return err
				}
				return &exitError{code: 2, err: err}
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: 2, err: err} })
	fl := cmd.Flags()
	fl.BoolVar(&f.offline, "offline", false, "plan from manifests on disk against --current, without a cluster")
	fl.StringSliceVarP(&f.files, "filename", "f", nil, "files and directories holding the manifests to apply; with --offline, all the pool's MachineConfigs after the change (repeatable)")
	fl.StringVar(&f.current, "current", "", "with --offline: file holding the rendered MachineConfig the pool's nodes run now")
	fl.StringVar(&f.pool, "pool", "", "pool to plan (default: every pool the change touches; with --offline, worker): on the cluster or in -f, or built-in master/worker offline")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	fl.StringVarP(&f.output, "output", "o", "", "output format: text (default) or json")
	fl.StringVar(&f.policy, "policy", "", "file holding MachineConfiguration cluster, whose spec.nodeDisruptionPolicy applies over the defaults (instead of the cluster's)")
	fl.StringVar(&f.osImageURL, "os-image-url", "", "with --offline: OS image the pool gets when no MachineConfig sets osImageURL")
	fl.StringVar(&f.extensionsImage, "base-os-extensions-image", "", "with --offline: extensions image the pool gets when no MachineConfig sets baseOSExtensionsContainerImage")
	return cmd
}

func runPlan(cmd *cobra.Command, f planFlags) error {
	if f.output != "" && f.output != "text" && f.output != "json" {
		return fmt.Errorf("--output: unknown format %q (want text or json)", f.output)
	}
	if !f.offline {
		return runLivePlan(cmd, f)
	}
	if f.pool == "" {
		f.pool = "worker"
	}
	switch {
	case len(f.files) == 0:
		return fmt.Errorf("--offline needs -f with the pool's MachineConfigs after the change")
	case f.current == "":
		return fmt.Errorf("--offline needs --current with the rendered MachineConfig the pool runs now")
	}
	policies, err := loadPolicies(f.policy)
	if err != nil {
		return err
	}
	current, err := loadCurrent(f.current)
	if err != nil {
		return err
	}
	var found problems.List
	set, err := manifest.Load(manifest.Options{FCOSRole: f.pool}, f.files...)
	found.AddLoad(err)
	if err := found.Report(cmd.ErrOrStderr(), "bad input"); err != nil {
		return &exitError{code: 2, err: err}
	}
	pool, err := poolFor(set, f.pool)
	if err != nil {
		return err
	}
	p, err := changeplan.Compute(changeplan.Input{
		Pool: pool, Current: current, MachineConfigs: set.MachineConfigs, Policies: policies,
		Render: render.Options{
			Defaults:          render.Defaults{OSImageURL: f.osImageURL, BaseOSExtensionsContainerImage: f.extensionsImage},
			ControllerVersion: version.Commit,
		},
	})
	if err != nil {
		found.Add(problems.Located(set, pool, err)...)
		return &exitError{code: 2, err: found.Report(cmd.ErrOrStderr(), "cannot render pool "+pool.Name)}
	}
	var warned problems.Warnings
	warned.Print(cmd.ErrOrStderr(), set, p.Warnings)
	if err := writeOutput(cmd.OutOrStdout(), f.output, p, func(w io.Writer) error { return planview.WritePlan(w, p) }); err != nil {
		return err
	}
	if code := p.ExitCode(); code != 0 {
		return &exitError{code: code, err: errors.New(p.Why())}
	}
	return nil
}

// writeOutput writes v as indented JSON for -o json, else as text writes it.
func writeOutput(w io.Writer, format string, v any, text func(io.Writer) error) error {
	if format != "json" {
		return text(w)
	}
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", js)
	return err
}

// loadCurrent reads the one rendered MachineConfig in path.
func loadCurrent(path string) (*mcfgv1.MachineConfig, error) {
	set, err := manifest.Load(manifest.Options{}, path)
	if err != nil {
		return nil, fmt.Errorf("--current: %w", err)
	}
	if len(set.MachineConfigs) != 1 || len(set.Pools) != 0 {
		return nil, fmt.Errorf("--current %s: want exactly one MachineConfig, found %d MachineConfigs and %d pools", path, len(set.MachineConfigs), len(set.Pools))
	}
	return set.MachineConfigs[0], nil
}

// loadPolicies reads MachineConfiguration cluster, strictly; no file means OpenShift's defaults.
func loadPolicies(path string) (plan.Policies, error) {
	if path == "" {
		return plan.DefaultPolicies(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return plan.Policies{}, fmt.Errorf("--policy: %w", err)
	}
	var mc operatorv1.MachineConfiguration
	if err := yaml.UnmarshalStrict(data, &mc); err != nil {
		return plan.Policies{}, fmt.Errorf("--policy %s: %w", path, err)
	}
	if mc.Kind != "MachineConfiguration" {
		return plan.Policies{}, fmt.Errorf("--policy %s: kind %q, want MachineConfiguration", path, mc.Kind)
	}
	return plan.PoliciesOf(&mc), nil
}
