package runningkubelet

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/mco-dev/mco/internal/kubeletfiles"
)

// NotInEffectError says that a drop-in of mco's is not what the kubelet runs with, and why.
type NotInEffectError struct {
	Path string
	// Reason, when the kubelet does not read Path as written at all.
	Reason string
	// Fields, otherwise: the drop-in's settings the kubelet's configuration does not have,
	// "(--flag)" naming a command-line flag that overrides one.
	Fields []string
}

func (e *NotInEffectError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("the kubelet drop-in %s is not in effect: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("the kubelet drop-in %s is not in effect: the kubelet's configuration (its --config file, drop-ins and flags) does not have its %s",
		e.Path, strings.Join(e.Fields, ", "))
}

// Check returns nil when every setting of dropIn, the drop-in a config writes at dropInPath,
// is in the configuration k's kubelet reads, else a *NotInEffectError (or the error reading
// that configuration the way the kubelet does). It judges the files as they are now, while the
// kubelet read them when it started: check after the kubelet restarted for the drop-in (the
// plan's restart), once it runs again.
//
// Not in effect: a kubelet without --config-dir or with another one (kubeadm's kubelet has
// none unless the admin adds it); the file missing on the node or different from dropIn; a
// setting a later drop-in replaces, or one a command-line flag sets (flags win over every
// file).
func (k Kubelet) Check(dropInPath string, dropIn []byte) error {
	fail := func(format string, args ...any) error {
		return &NotInEffectError{Path: dropInPath, Reason: fmt.Sprintf(format, args...)}
	}
	dir := path.Dir(dropInPath)
	switch {
	case k.DropInDir == "":
		return fail("the kubelet runs without --config-dir, so it reads no drop-ins; start it with --config-dir=%s (on a kubeadm node: KUBELET_EXTRA_ARGS in /etc/default/kubelet or /etc/sysconfig/kubelet) and restart it", dir)
	case k.DropInDir != dir:
		return fail("the kubelet reads its drop-ins from --config-dir=%s, not %s", k.DropInDir, dir)
	}
	onNode, ok := k.DropIns[path.Base(dropInPath)]
	switch {
	case !ok:
		return fail("the file is not on the node")
	case !bytes.Equal(onNode, dropIn):
		return fail("the file on the node differs from the config's")
	}
	effective, err := kubeletfiles.Effective(k.Config, k.DropIns)
	if err != nil {
		return fail("the kubelet's configuration cannot be read as the kubelet reads it: %v", err)
	}
	flagged := kubeletfiles.FlagsOverriding(k.Args, dropIn)
	fields := slices.Clone(flagged)
	for _, f := range kubeletfiles.Satisfies(effective, dropIn) {
		if !slices.ContainsFunc(flagged, func(e string) bool { return strings.HasPrefix(e, f+" (--") }) {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	slices.Sort(fields)
	return &NotInEffectError{Path: dropInPath, Fields: fields}
}
