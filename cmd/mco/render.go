//go:build !nodeagent && !mcoserver

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/coreos/go-semver/semver"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/problems"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/version"
)

type renderFlags struct {
	pool, output, specVersion   string
	ignitionOnly                bool
	osImageURL, extensionsImage string
}

func newRenderCommand() *cobra.Command {
	var f renderFlags
	cmd := &cobra.Command{
		Use:   "render --pool NAME [flags] PATH...",
		Short: "Render a pool's MachineConfig from manifests on disk, offline",
		Long: `Render merges the MachineConfigs a pool selects into the pool's rendered MachineConfig,
exactly as the controller would, from manifests on disk, and prints it.

PATH is any number of files and directories (walked recursively; .yaml, .yml, .json and .bu
files; several documents per file separated by "---"; decoded strictly, so unknown fields
are errors). They may hold MachineConfigs, MachineConfigPools, Lists of them (as written by
"kubectl get -o yaml") and Butane configs; any other kind is an error:
  variant: openshift  becomes the MachineConfig its metadata names.
  variant: fcos       becomes a MachineConfig named after its file without the extension
                      (99-ssh.bu → "99-ssh"), labelled
                      machineconfiguration.openshift.io/role=<--pool>, so the pool renders
                      it; one fcos config per file; fcos 1.0.0–1.6.0 (later versions produce
                      Ignition specs newer than the 3.5.0 MachineConfigs carry).
Butane local: paths resolve against the Butane file's directory; Butane warnings are errors.

--pool names a MachineConfigPool from PATH; without one, "worker" and "master" are the
built-in pools with OpenShift's default selectors.

With --ignition only the merged Ignition config is printed (JSON unless -o yaml), at spec
--spec-version; converting to an older spec fails, naming what that spec cannot express.

Bad input exits 1 listing every problem as "file:document: field: reason". Keys Ignition only
warns about render as in OpenShift (ignored, or read as the field they spell in another case;
see "mco validate --help") and are printed on stderr as "warning: ..." lines; the exit code
stays 0.`,
		Example: `  mco render --pool worker ./manifests
  mco render --pool infra -o json pools/ machineconfigs/
  mco render --pool worker --ignition --spec-version 3.2.0 99-worker-ssh.bu`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, paths []string) error {
			return runRender(cmd, f, paths)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.pool, "pool", "", "pool to render (required)")
	fl.StringVarP(&f.output, "output", "o", "", "output format: yaml or json (default yaml; json with --ignition)")
	fl.BoolVar(&f.ignitionOnly, "ignition", false, "print only the rendered Ignition config")
	fl.StringVar(&f.specVersion, "spec-version", ignition.CanonicalVersion.String(), "Ignition spec version for --ignition: "+ignition.ServableList())
	fl.StringVar(&f.osImageURL, "os-image-url", "", "OS image the pool gets when no MachineConfig sets osImageURL")
	fl.StringVar(&f.extensionsImage, "base-os-extensions-image", "", "extensions image the pool gets when no MachineConfig sets baseOSExtensionsContainerImage")
	_ = cmd.MarkFlagRequired("pool")
	return cmd
}

func runRender(cmd *cobra.Command, f renderFlags, paths []string) error {
	if f.output != "" && f.output != "yaml" && f.output != "json" {
		return fmt.Errorf("--output: unknown format %q (want yaml or json)", f.output)
	}
	target, err := parseSpecVersion(f.specVersion)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("spec-version") && !f.ignitionOnly {
		return fmt.Errorf("--spec-version applies to --ignition output only")
	}

	// One pass over everything, then exit: collecting garbage a quarter as often saves a
	// seventh of the CPU on a large pool (bench/render), for a peak heap a third higher.
	debug.SetGCPercent(400)

	var found problems.List
	set, err := manifest.Load(manifest.Options{FCOSRole: f.pool}, paths...)
	found.AddLoad(err)
	if err := found.Report(cmd.ErrOrStderr(), "bad input"); err != nil {
		return err
	}
	pool, err := poolFor(set, f.pool)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	res, err := render.Render(pool, set.MachineConfigs, render.Options{
		Defaults:          render.Defaults{OSImageURL: f.osImageURL, BaseOSExtensionsContainerImage: f.extensionsImage},
		ControllerVersion: version.Commit,
	})
	if err != nil {
		found.Add(problems.Located(set, pool, err)...)
		return found.Report(cmd.ErrOrStderr(), "cannot render pool "+pool.Name)
	}
	var warned problems.Warnings
	warned.Print(cmd.ErrOrStderr(), set, res.Warnings)

	var out []byte
	if f.ignitionOnly {
		out, err = ignitionOutput(res.Ignition, target, f.output)
	} else {
		out, err = objectOutput(res.Config, f.output)
	}
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}

// poolFor finds the pool to render: a manifest in PATH wins over the built-in pool of that name.
func poolFor(set *manifest.Set, name string) (*mcfgv1.MachineConfigPool, error) {
	if p := set.Pool(name); p != nil {
		return p, nil
	}
	if slices.Contains(pools.Names, name) {
		return pools.Builtin(name)
	}
	return nil, fmt.Errorf("--pool %s: no MachineConfigPool %q in the manifests given, and it is not a built-in pool (%s)", name, name, strings.Join(pools.Names, ", "))
}

// parseSpecVersion accepts any servable spec in the forms ignition.ParseLooseVersion reads,
// so "3.4" works as well as "3.4.0".
func parseSpecVersion(s string) (semver.Version, error) {
	v, err := ignition.ParseLooseVersion(s)
	if err != nil || !ignition.IsServable(v) {
		return semver.Version{}, fmt.Errorf("--spec-version %s: want one of %s", s, ignition.ServableList())
	}
	return v, nil
}

// ignitionOutput prints Ignition as JSON by default, since that is what machines consume.
func ignitionOutput(cfg ignition.Config, target semver.Version, format string) ([]byte, error) {
	raw, err := ignition.Convert(cfg, target)
	if err != nil {
		if v, ok := ignition.OldestServableAfter(cfg, target); ok {
			return nil, fmt.Errorf("%w (use --spec-version %s or newer)", err, v)
		}
		return nil, err
	}
	if format == "yaml" {
		return manifest.JSONToYAML(raw)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

func objectOutput(obj any, format string) ([]byte, error) {
	if format == "json" {
		out, err := json.MarshalIndent(obj, "", "  ")
		return append(out, '\n'), err
	}
	return manifest.YAML(obj)
}
