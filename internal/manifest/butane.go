package manifest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/coreos/go-semver/semver"
	butane "github.com/coreos/ignition/v2/butane/config"
	butanecommon "github.com/coreos/ignition/v2/butane/config/common"
	"github.com/coreos/vcontext/report"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// Butane variants mco reads. Others (flatcar, r4e, fiot) target systems mco does not manage
// through MachineConfigs.
const (
	variantOpenShift = "openshift"
	variantFCOS      = "fcos"
)

// decodeButane translates a Butane config with the Butane library of the ignition module.
//
//   - variant openshift yields a MachineConfig, named and labelled by the config's metadata.
//   - variant fcos yields a bare Ignition config. It becomes a MachineConfig named after its file
//     without the extension (99-ssh.bu → "99-ssh"), labelled with role Options.FCOSRole when
//     that is set, so one fcos config per file.
//
// Like `butane --strict`, warnings are errors: Butane reports unknown keys only as warnings,
// and mco decodes everything else strictly. `local:` file references resolve against the
// directory of the Butane file.
func (l *loader) decodeButane(src Source, variant string) (decoded, Errors) {
	if variant != variantOpenShift && variant != variantFCOS {
		return decoded{}, Errors{src.FieldError("variant", fmt.Sprintf("%q is not supported (want %s or %s)", variant, variantFCOS, variantOpenShift))}
	}
	opts := butanecommon.TranslateBytesOptions{
		TranslateOptions: butanecommon.TranslateOptions{FilesDir: filepath.Dir(src.File)},
	}
	out, rpt, err := butane.TranslateBytes(src.doc.data, opts)
	if errs := butaneErrors(src, rpt, err); len(errs) > 0 {
		return decoded{}, errs
	}
	translated := src
	translated.FromButane = true
	if variant == variantOpenShift {
		// The output is a MachineConfig manifest; decode it like any other, so it gets the same checks.
		js, err := yaml.YAMLToJSON(out)
		if err != nil {
			return decoded{}, Errors{{File: src.File, Document: src.Document, Reason: "Butane produced an unreadable MachineConfig: " + err.Error()}}
		}
		return decodeObject(translated, js, header{APIVersion: apiVersion, Kind: kindMachineConfig})
	}
	mc, e := l.wrapFCOS(src, out)
	if e != nil {
		return decoded{}, Errors{e}
	}
	return decoded{mcs: []*mcfgv1.MachineConfig{mc}, mcSources: []Source{translated}}, nil
}

// butaneErrors turns Butane's report into file positions. The report's lines are relative to
// the document, which may not start the file.
func butaneErrors(src Source, rpt report.Report, err error) Errors {
	var errs Errors
	for _, entry := range rpt.Entries {
		if entry.Kind != report.Error && entry.Kind != report.Warn {
			continue
		}
		e := &Error{File: src.File, Document: src.Document, Field: butanePath(entry), Reason: entry.Message}
		if entry.Kind == report.Warn {
			e.Reason += " (a Butane warning; mco treats warnings as errors)"
		}
		if entry.Marker.StartP != nil {
			line, col := entry.Marker.Start()
			e.Line, e.Column = min(src.doc.firstLine+int(line)-1, src.doc.lastLine()), int(col)
		}
		errs = append(errs, e)
	}
	if err != nil && len(errs) == 0 {
		e := &Error{File: src.File, Document: src.Document, Reason: err.Error()}
		switch err.(type) {
		case butanecommon.ErrUnknownVersion:
			e.Field = "version"
		case butanecommon.ErrUnmarshal:
			e = withYAMLLine(e, src.doc)
		}
		errs = append(errs, e)
	}
	return errs
}

// butanePath is the report's "$.storage.files.0.mode" as a manifest field path.
func butanePath(entry report.Entry) string {
	return strings.TrimPrefix(strings.TrimPrefix(entry.Context.String(), "$"), ".")
}

// wrapFCOS makes the MachineConfig an fcos config stands for (see decodeButane).
func (l *loader) wrapFCOS(src Source, ign []byte) (*mcfgv1.MachineConfig, *Error) {
	var probe struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(ign, &probe); err != nil {
		return nil, &Error{File: src.File, Document: src.Document, Reason: "Butane produced an unreadable Ignition config: " + err.Error()}
	}
	// Newer fcos versions produce Ignition specs past the one MachineConfigs carry.
	if v, err := semver.NewVersion(probe.Ignition.Version); err == nil && ignition.CanonicalVersion.LessThan(*v) {
		return nil, &Error{File: src.File, Document: src.Document, Field: "version", Reason: fmt.Sprintf(
			"this fcos version produces Ignition spec %s; MachineConfigs carry at most %s (fcos 1.6.0)", v, ignition.CanonicalVersion)}
	}
	base := filepath.Base(src.File)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if reason := nameProblem(name); reason != "" {
		return nil, &Error{File: src.File, Document: src.Document, Reason: fmt.Sprintf(
			"an fcos config becomes a MachineConfig named after its file, and %s; rename the file or use variant openshift with metadata.name", reason)}
	}
	mc := &mcfgv1.MachineConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: kindMachineConfig},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: ign}},
	}
	if l.opts.FCOSRole != "" {
		mc.Labels = map[string]string{protocol.RoleLabel: l.opts.FCOSRole}
	}
	return mc, nil
}
