package render

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/ignition"
)

// deliberatelyNotOpenShift are the cases of testdata/openshift/reconcilable.json where mco's
// verdict differs from OpenShift's, with the reason (docs/architecture.md, "Where we differ").
var deliberatelyNotOpenShift = map[string]string{
	// OpenShift compares the lists with reflect.DeepEqual; the disk is the same either way.
	"links: same links in another order":             "accepted: the order of links changes nothing on disk",
	"directories: same directories in another order": "accepted: the order of directories changes nothing on disk",
	// OpenShift's check has no luks section, so it accepts a change it never applies.
	"luks: added":                       "refused: luks is disk layout, set at install time",
	"luks: added, all three overridden": "refused: no override covers luks",
}

// TestReconcilableAsOpenShift: every case of testdata/openshift/reconcilable.json is refused
// exactly when OpenShift's IsRenderedConfigReconcilable (pkg/controller/common) refuses it, with
// the case's irreconcilableValidationOverrides; "openshift" is its error ("" = reconcilable),
// recorded by running OpenShift's function on the cases (testdata/openshift/README.md).
func TestReconcilableAsOpenShift(t *testing.T) {
	data, err := os.ReadFile("testdata/openshift/reconcilable.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Reconcile []struct {
			Name      string          `json:"name"`
			Old       json.RawMessage `json:"old"`
			New       json.RawMessage `json:"new"`
			OldFIPS   bool            `json:"oldFIPS"`
			NewFIPS   bool            `json:"newFIPS"`
			Overrides []string        `json:"overrides"`
			OpenShift *string         `json:"openshift"`
		} `json:"reconcile"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Reconcile) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range golden.Reconcile {
		t.Run(c.Name, func(t *testing.T) {
			if c.OpenShift == nil {
				t.Fatal("no OpenShift verdict")
			}
			old, err := ignition.Parse(c.Old)
			if err != nil {
				t.Fatal(err)
			}
			new, err := ignition.Parse(c.New)
			if err != nil {
				t.Fatal(err)
			}
			var allow Overrides
			for _, o := range c.Overrides {
				switch o {
				case "Disks":
					allow.Disks = true
				case "FileSystems":
					allow.Filesystems = true
				case "Raid":
					allow.Raid = true
				default:
					t.Fatalf("unknown override %q", o)
				}
			}
			vs := CheckReconcilable(old, new, c.OldFIPS, c.NewFIPS, allow)
			refused, openshiftRefused := len(vs) > 0, *c.OpenShift != ""
			if why, differs := deliberatelyNotOpenShift[c.Name]; differs {
				if refused == openshiftRefused {
					t.Fatalf("listed as a deliberate difference (%s), but mco decides as OpenShift (violations %v)", why, vs)
				}
				return
			}
			if refused != openshiftRefused {
				t.Fatalf("mco violations %v; OpenShift: %q", vs, *c.OpenShift)
			}
		})
	}
}

// The refusals this change added name what the admin must change.
func TestReconcilabilityReasons(t *testing.T) {
	parse := func(s string) ignition.Config {
		t.Helper()
		c, err := ignition.Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	const v = `{"ignition":{"version":"3.5.0"}`
	for _, tc := range []struct {
		name, old, new string
		want           string
	}{
		{"core locked out", v + `,"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA"]}]}}`, v + `,"passwd":{"users":[{"name":"core"}]}}`,
			`passwd.users "core": core would have neither an SSH key nor a password hash, so nobody could log in as core`},
		{"one of two links removed", v + `,"storage":{"links":[{"path":"/etc/a","target":"/x"},{"path":"/etc/b","target":"/y"}]}}`,
			v + `,"storage":{"links":[{"path":"/etc/a","target":"/x"}]}}`,
			`storage.links "/etc/b": a link can only be removed together with all the others, and the new config keeps 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := CheckReconcilable(parse(tc.old), parse(tc.new), false, false, Overrides{})
			if len(vs) != 1 || !strings.Contains(vs[0].String(), tc.want) {
				t.Fatalf("violations %v, want one containing %q", vs, tc.want)
			}
		})
	}
}
