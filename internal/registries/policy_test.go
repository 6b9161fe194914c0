package registries

import (
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/generatedmc"
)

func baseOf(data []byte) generatedmc.Base { return generatedmc.Base{Source: "test", Data: data} }

func TestPolicyBaseDecoding(t *testing.T) {
	cases := []struct {
		name, base, err string
	}{
		{"no default", `{"transports":{}}`, `"default" is missing`},
		{"unknown key", `{"default":[{"type":"reject"}],"extra":1}`, "unknown field"},
		{"repeated key", `{"default":[{"type":"reject"}],"default":[{"type":"reject"}]}`, "duplicate field"},
		{"empty default", `{"default":[]}`, "must not be empty"},
		{"unknown type", `{"default":[{"type":"acceptEverything"}]}`, `unknown requirement type "acceptEverything"`},
		{"extra key on a simple type", `{"default":[{"type":"reject","keyPath":"/x"}]}`, `a "reject" requirement takes no other keys`},
		{"not JSON", `default = reject`, "decoding the base policy.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policyJSON([]byte(tc.base), []string{"a.io"}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// Requirements the generator never writes are kept as the base has them (OpenShift would
// re-encode them in containers/image's field order; see the package comment).
func TestPolicyKeepsOtherRequirements(t *testing.T) {
	base := `{"default":[{"type":"insecureAcceptAnything"}],"transports":{"docker":{"quay.io/signed":[{"type":"signedBy","keyType":"GPGKeys","keyPath":"/etc/pki/key.gpg"}]},"docker-daemon":{"":[{"type":"insecureAcceptAnything"}]}}}`
	out, err := policyJSON([]byte(base), nil, []string{"quay.io"})
	if err != nil {
		t.Fatal(err)
	}
	// The docker transport is replaced, as OpenShift does; a signedBy elsewhere survives.
	if strings.Contains(string(out), "signedBy") {
		t.Errorf("docker transport not replaced:\n%s", out)
	}
	base = strings.Replace(base, `"docker":`, `"atomic-old":`, 1)
	out, err = policyJSON([]byte(base), nil, []string{"quay.io"})
	if err != nil {
		t.Fatal(err)
	}
	want := "\"atomic-old\": {\n      \"quay.io/signed\": [\n        {\n          \"type\": \"signedBy\",\n          \"keyType\": \"GPGKeys\",\n          \"keyPath\": \"/etc/pki/key.gpg\"\n        }\n      ]\n    }"
	if !strings.Contains(string(out), want) {
		t.Errorf("signedBy requirement not kept as written:\n%s", out)
	}
}

// On vanilla Kubernetes the bases are the built-in defaults: a mirror set gives registries.conf
// over ["docker.io"], a blocked registry policy.json over the default policy.
func TestDefaultBases(t *testing.T) {
	p, err := NewPlan(Cluster{
		Image: image(apicfgvRegistrySourcesBlocked("blocked.io")),
		IDMS:  nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	files, err := p.Files(Bases{Registries: baseOf(DefaultRegistriesConf()), Policy: baseOf(DefaultPolicyJSON())})
	if err != nil {
		t.Fatal(err)
	}
	wantReg := "unqualified-search-registries = [\"docker.io\"]\nshort-name-mode = \"\"\nadditional-layer-store-auth-helper = \"\"\n\n[[registry]]\n  prefix = \"\"\n  location = \"blocked.io\"\n  blocked = true\n"
	if string(files[0].Data) != wantReg {
		t.Errorf("registries.conf:\n%s\nwant:\n%s", files[0].Data, wantReg)
	}
	wantPolicy := `{
  "default": [
    {
      "type": "insecureAcceptAnything"
    }
  ],
  "transports": {
    "atomic": {
      "blocked.io": [
        {
          "type": "reject"
        }
      ]
    },
    "docker": {
      "blocked.io": [
        {
          "type": "reject"
        }
      ]
    },
    "docker-daemon": {
      "": [
        {
          "type": "insecureAcceptAnything"
        }
      ]
    }
  }
}`
	if string(files[1].Data) != wantPolicy {
		t.Errorf("policy.json:\n%s", files[1].Data)
	}
	if files[2].Data != nil {
		t.Errorf("search drop-in written without a search list: %q", files[2].Data)
	}
}
