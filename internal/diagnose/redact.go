package diagnose

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/ignition"
)

// Redaction is one value hidden from the bundle.
type Redaction struct {
	MachineConfig string
	// What is hidden: "file PATH" or "passwordHash of user NAME".
	What string
	// SHA256 is the hex sha256 of the hidden value (a file's decoded contents; the source
	// itself when it is not an inline data: URL), so two bundles can be compared.
	SHA256 string
}

func (r Redaction) String() string {
	return fmt.Sprintf("machineconfig %s: %s: sha256 %s", r.MachineConfig, r.What, r.SHA256)
}

// lastAppliedAnnotation is where kubectl apply keeps a copy of the whole object as applied:
// a copy of a MachineConfig's files that redaction would not see.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// stripNoise drops what makes a bundle longer without telling anything (managed fields) and
// what may hold an unredacted copy of the object (the last-applied annotation).
func stripNoise(obj client.Object) {
	obj.SetManagedFields(nil)
	if a := obj.GetAnnotations(); a != nil {
		if _, ok := a[lastAppliedAnnotation]; ok {
			delete(a, lastAppliedAnnotation)
			if len(a) == 0 {
				a = nil
			}
			obj.SetAnnotations(a)
		}
	}
}

// RedactMachineConfig returns a copy of mc whose Ignition config shows, for every file at a
// path changeplan.IsSecretPath calls secret (contents and appended fragments alike), and for
// every user's password hash, only a placeholder naming the value's sha256; and the redactions
// made. The config stays valid Ignition of the same version. A config that is not JSON cannot
// be searched for secrets, so it is dropped whole and reported as an error.
func RedactMachineConfig(mc *mcfgv1.MachineConfig) (*mcfgv1.MachineConfig, []Redaction, error) {
	out := mc.DeepCopy()
	stripNoise(out)
	if len(out.Spec.Config.Raw) == 0 {
		return out, nil, nil
	}
	var cfg map[string]any
	if err := json.Unmarshal(out.Spec.Config.Raw, &cfg); err != nil {
		out.Spec.Config.Raw = nil
		return out, nil, fmt.Errorf("machineconfig %s: spec.config is not JSON (%v): left out whole, it may hold secrets", mc.Name, err)
	}
	var done []Redaction
	add := func(what, sum string) {
		done = append(done, Redaction{MachineConfig: mc.Name, What: what, SHA256: sum})
	}

	storage, _ := cfg["storage"].(map[string]any)
	files, _ := storage["files"].([]any)
	for _, f := range files {
		file, _ := f.(map[string]any)
		p, _ := file["path"].(string)
		if file == nil || !changeplan.IsSecretPath(p) {
			continue
		}
		if contents, ok := file["contents"].(map[string]any); ok {
			if sum, ok := redactResource(contents); ok {
				add("file "+p, sum)
			}
		}
		// Ignition 3 appends fragments from a list; Ignition 2's append is a bool.
		fragments, _ := file["append"].([]any)
		for i, fr := range fragments {
			if res, ok := fr.(map[string]any); ok {
				if sum, ok := redactResource(res); ok {
					add(fmt.Sprintf("file %s (append %d)", p, i), sum)
				}
			}
		}
	}
	passwd, _ := cfg["passwd"].(map[string]any)
	users, _ := passwd["users"].([]any)
	for _, u := range users {
		user, _ := u.(map[string]any)
		if hash, ok := user["passwordHash"].(string); ok && hash != "" {
			sum := sha(hash)
			user["passwordHash"] = "redacted-by-mco-diagnose-sha256-" + sum
			add(fmt.Sprintf("passwordHash of user %v", user["name"]), sum)
		}
	}
	if len(done) == 0 {
		return out, nil, nil
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}
	out.Spec.Config.Raw = raw
	return out, done, nil
}

// redactResource replaces an Ignition resource's source with a data: URL saying it was
// redacted and naming its sha256. Compression goes (the placeholder is plain text); the
// verification hash stays, being a hash already.
func redactResource(res map[string]any) (string, bool) {
	source, ok := res["source"].(string)
	if !ok || source == "" {
		return "", false
	}
	var compression *string
	if c, ok := res["compression"].(string); ok {
		compression = &c
	}
	sum := sha(source)
	if in, err := ignition.DecodeInline(source, compression, ignition.MaxInlineDecompressed); err == nil {
		sum = sha(string(in.Data))
	}
	res["source"] = "data:," + url.PathEscape("redacted by mco diagnose: sha256 "+sum+"\n")
	delete(res, "compression")
	return sum, true
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
