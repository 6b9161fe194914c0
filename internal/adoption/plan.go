package adoption

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Plan is what adopting the node into Target would do.
type Plan struct {
	Target string `json:"target"`
	// Files the adoption writes, each with what differs on the host now.
	Files []FileChange `json:"files,omitempty"`
	// Units whose enablement or mask the adoption changes (their files are in Files).
	Units []UnitChange `json:"units,omitempty"`
	// OS lists the fields of the config the booted system does not have yet (kernelArguments, ...).
	OS []string `json:"os,omitempty"`
	// Password: core's password hash differs.
	Password bool `json:"password,omitempty"`
	// Actions is the planned disruption in the update planner's words ("Reboot",
	// "Restart kubelet.service", "None").
	Actions string `json:"actions"`
	Drain   bool   `json:"drain"`
	Reboot  bool   `json:"reboot"`
	// Refused names what this host cannot apply; approving the adoption does not help, the
	// config or the host must change.
	Refused []string `json:"refused,omitempty"`
}

// FileChange is one file the adoption writes.
type FileChange struct {
	Path string `json:"path"`
	// Change is what differs: ChangeCreate, ChangeContent, ChangeMode, ChangeLink, ChangeType.
	Change string `json:"change"`
	// Diff is a unified diff from the host's file to the config's, when both are small text that
	// anyone on the node may read; Note says otherwise why there is none.
	Diff string `json:"diff,omitempty"`
	Note string `json:"note,omitempty"`
}

// UnitChange is one unit whose enablement the adoption changes.
type UnitChange struct {
	Name   string `json:"name"`
	Change string `json:"change"`
}

const (
	ChangeCreate  = "create"
	ChangeContent = "content"
	ChangeMode    = "mode"
	ChangeLink    = "link"
	ChangeType    = "type"
)

// Matches: the host already is in Target; adopting it changes nothing.
func (p Plan) Matches() bool {
	return len(p.Files) == 0 && len(p.Units) == 0 && len(p.OS) == 0 && !p.Password && len(p.Refused) == 0
}

// Summary is one line for a Node's reason, `mco status` and events.
func (p Plan) Summary() string {
	if len(p.Refused) > 0 {
		return fmt.Sprintf("cannot be adopted into %s: %s", p.Target, strings.Join(p.Refused, "; "))
	}
	if p.Matches() {
		return fmt.Sprintf("already in %s: adopting changes nothing", p.Target)
	}
	var parts []string
	if n := len(p.Files); n > 0 {
		paths := make([]string, 0, n)
		for _, f := range p.Files {
			paths = append(paths, f.Path)
		}
		parts = append(parts, fmt.Sprintf("write %s (%s)", plural(n, "file"), abbreviate(paths, 5)))
	}
	if n := len(p.Units); n > 0 {
		names := make([]string, 0, n)
		for _, u := range p.Units {
			names = append(names, u.Name)
		}
		parts = append(parts, fmt.Sprintf("change %s (%s)", plural(n, "unit"), abbreviate(names, 5)))
	}
	if len(p.OS) > 0 {
		parts = append(parts, "change "+strings.Join(p.OS, ", "))
	}
	if p.Password {
		parts = append(parts, "set core's password")
	}
	how := "then " + strings.ToLower(p.Actions)
	if p.Actions == "" || p.Actions == "None" {
		how = "with no restart or reboot"
	}
	if p.Drain {
		how = "drain, " + how
	}
	return fmt.Sprintf("adopting into %s would %s, %s", p.Target, strings.Join(parts, ", "), how)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func abbreviate(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(", and %d more", len(items)-max)
}

// MaxEncoded bounds the annotation: diffs are dropped (with a note) until the plan fits, so a
// Node never grows by more than this however large the files.
const MaxEncoded = 32 << 10

// Encode is the annotation's value.
func Encode(p Plan) (string, error) {
	for {
		data, err := json.Marshal(p)
		if err != nil {
			return "", err
		}
		if len(data) <= MaxEncoded {
			return string(data), nil
		}
		largest := -1
		for i, f := range p.Files {
			if f.Diff != "" && (largest < 0 || len(f.Diff) > len(p.Files[largest].Diff)) {
				largest = i
			}
		}
		if largest < 0 {
			return "", fmt.Errorf("the adoption plan for %s is %d bytes without any diff, over %d", p.Target, len(data), MaxEncoded)
		}
		files := append([]FileChange(nil), p.Files...)
		files[largest].Diff, files[largest].Note = "", "diff left out: the plan would not fit on the Node"
		p.Files = files
	}
}

// Decode reads the annotation's value.
func Decode(s string) (Plan, error) {
	var p Plan
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return Plan{}, fmt.Errorf("adoption plan: %w", err)
	}
	return p, nil
}
