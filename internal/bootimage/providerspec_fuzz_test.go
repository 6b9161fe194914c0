package bootimage

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/stream-metadata-go/stream"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/internal/protocol"
)

// fuzzObject returns m[key] when it is a JSON object, else nil.
func fuzzObject(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// fuzzString follows keys through nested objects to a string; "" when any step is missing.
func fuzzString(m map[string]any, keys ...string) string {
	for _, k := range keys[:len(keys)-1] {
		m = fuzzObject(m, k)
	}
	s, _ := m[keys[len(keys)-1]].(string)
	return s
}

// fuzzArchitectures are the stream architectures the fuzz targets try, one picked by a fuzzed
// index: the four OpenShift ships and one no stream has.
var fuzzArchitectures = []string{"x86_64", "aarch64", "s390x", "ppc64le", "riscv64"}

// imageFields removes from spec (a decoded providerSpec of kind) the fields an update may set;
// what is left must be the same before and after.
func imageFields(spec map[string]any) {
	switch spec["kind"] {
	case kindAWS:
		if ami := fuzzObject(spec, "ami"); ami != nil {
			delete(ami, "id")
		}
	case kindGCP:
		disks, _ := spec["disks"].([]any)
		for _, d := range disks {
			if disk, _ := d.(map[string]any); disk != nil {
				if boot, _ := disk["boot"].(bool); boot {
					delete(disk, "image")
				}
			}
		}
	case kindAzure:
		if image := fuzzObject(spec, "image"); image != nil {
			for _, k := range []string{"publisher", "offer", "sku", "version", "type"} {
				delete(image, k)
			}
		}
	}
}

// streamImage is the image the stream publishes for spec's platform, as the update writes it,
// and whether spec now carries it. ok=false when spec's platform has no simple answer (Azure's
// depends on the offer and generation: the update's own idempotence checks it).
func streamImage(spec map[string]any, images stream.Arch) (want string, got []string, ok bool) {
	switch spec["kind"] {
	case kindAWS:
		if images.Images.Aws == nil {
			return "", nil, false
		}
		return images.Images.Aws.Regions[fuzzString(spec, "placement", "region")].Image, []string{fuzzString(spec, "ami", "id")}, true
	case kindGCP:
		if images.Images.Gcp == nil {
			return "", nil, false
		}
		disks, _ := spec["disks"].([]any)
		for _, d := range disks {
			if disk, _ := d.(map[string]any); disk != nil {
				if boot, _ := disk["boot"].(bool); boot {
					image, _ := disk["image"].(string)
					got = append(got, image)
				}
			}
		}
		return "projects/" + images.Images.Gcp.Project + "/global/images/" + images.Images.Gcp.Name, got, true
	}
	return "", nil, false
}

// checkUpdate runs UpdateProviderSpec and asserts: any other error than a skip is a *FieldError
// naming a field of the providerSpec and a reason, nothing is returned with an error or a skip,
// a document that is not one JSON object is never accepted; on success only the image fields change, to
// non-empty values the stream lists, the bytes stay as they were when nothing changes, and a
// second update changes nothing (the controller must not patch forever).
func checkUpdate(t *testing.T, raw []byte, st *stream.Stream, arch string) {
	t.Helper()
	out, changed, err := UpdateProviderSpec(raw, st, arch)
	_, decodeErr := decodeObject(raw)
	var skip *Skip
	switch {
	case errors.As(err, &skip):
		if out != nil || changed || decodeErr != nil || skip.Reason == "" {
			t.Fatalf("UpdateProviderSpec(%s, %s): skip %v returned out=%q changed=%v (decode: %v)", raw, arch, skip, out, changed, decodeErr)
		}
		return
	case err != nil:
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, ProviderSpecField) || fe.Reason == "" || out != nil || changed {
			t.Fatalf("UpdateProviderSpec(%s, %s): error %T %v does not name a providerSpec field (out=%q changed=%v)", raw, arch, err, err, out, changed)
		}
		return
	}
	if !json.Valid(raw) {
		t.Fatalf("UpdateProviderSpec(%q, %s) accepted a document that is not JSON", raw, arch)
	}
	if !changed && !bytes.Equal(out, raw) {
		t.Fatalf("UpdateProviderSpec(%s, %s): unchanged, but the bytes differ: %s", raw, arch, out)
	}
	before, _ := decodeObject(raw)
	after, err := decodeObject(out)
	if err != nil {
		t.Fatalf("UpdateProviderSpec(%s, %s) returned %s, not a JSON object: %v", raw, arch, out, err)
	}
	if want, got, ok := streamImage(after, st.Architectures[arch]); ok && changed {
		for _, g := range got {
			if g == "" || g != want {
				t.Fatalf("UpdateProviderSpec(%s, %s) set image %q, the stream lists %q", raw, arch, g, want)
			}
		}
	}
	if spec := fuzzObject(after, "image"); after["kind"] == kindAzure && changed {
		for _, k := range []string{"publisher", "offer", "sku", "version"} {
			if s, _ := spec[k].(string); s == "" {
				t.Fatalf("UpdateProviderSpec(%s, %s) set an Azure image without %s: %s", raw, arch, k, out)
			}
		}
	}
	imageFields(before)
	imageFields(after)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("UpdateProviderSpec(%s, %s) changed more than the image:\n%s", raw, arch, out)
	}
	again, changedAgain, err := UpdateProviderSpec(out, st, arch)
	if err != nil || changedAgain {
		t.Fatalf("UpdateProviderSpec is not idempotent on %s (%s): second update changed=%v err=%v: %s", raw, arch, changedAgain, err, again)
	}
}

func fuzzStream(f *testing.F) *stream.Stream {
	data, err := os.ReadFile("testdata/stream-4.16.json")
	if err != nil {
		f.Fatal(err)
	}
	st, err := ParseStream(string(data))
	if err != nil {
		f.Fatal(err)
	}
	return st
}

// FuzzUpdateProviderSpec updates any providerSpec from the 4.16 stream (checkUpdate says what
// must hold), and decides a MachineSet carrying it with managed user data: the decision's new
// providerSpec differs only in the image and the user-data Secret, and deciding again on it
// changes nothing.
//
// Seeds: the f.Add ones (the platform tests' specs) and testdata/fuzz/FuzzUpdateProviderSpec.
func FuzzUpdateProviderSpec(f *testing.F) {
	st := fuzzStream(f)
	for _, spec := range []string{
		awsSpec, gcpSpec, azureSpec,
		with(awsSpec, `{"id":"ami-0123456789abcdef0"}`, `{"arn":"arn:aws:ec2:us-east-1::image/ami-1"}`),
		with(gcpSpec, "projects/rhcos-cloud/global/images/rhcos-413", "https://www.googleapis.com/compute/v1/projects/rhcos-cloud/global/images/rhcos-413"),
		with(azureSpec, `"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413"`, `"offer":"rh-opp-worker","publisher":"redhat-limited","resourceID":"","sku":"rh-opp-worker"`),
		`{"kind":"VSphereMachineProviderSpec","template":"rhcos-413"}`, `{"kind":"AWSMachineProviderConfig"}`,
		`null`, `[]`, `{"kind":"AWSMachineProviderConfig","ami":{"id":"x"},"placement":{"region":"us-east-1"}} trailing`,
	} {
		for arch := range fuzzArchitectures {
			f.Add([]byte(spec), uint8(arch))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, archIndex uint8) {
		arch := fuzzArchitectures[int(archIndex)%len(fuzzArchitectures)]
		checkUpdate(t, raw, st, arch)

		kubeArch := map[string]string{"x86_64": "amd64", "aarch64": "arm64", "s390x": "s390x", "ppc64le": "ppc64le", "riscv64": "riscv64"}[arch]
		ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "fuzz"}}
		ms.Spec.Template.Labels = map[string]string{machineRoleLabel: "worker"}
		ms.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: raw}
		settings := Settings{DefaultArchitecture: kubeArch, UseManagedUserData: true}
		d, err := Decide(ms, st, settings)
		if err != nil || d.Skip != nil || d.ProviderSpec == nil {
			return
		}
		before, _ := decodeObject(raw)
		after, err := decodeObject(d.ProviderSpec)
		if err != nil {
			t.Fatalf("Decide(%s) gave a providerSpec that is not an object: %s", raw, d.ProviderSpec)
		}
		for _, spec := range []map[string]any{before, after} {
			imageFields(spec)
			if ref := fuzzObject(spec, "userDataSecret"); ref != nil {
				delete(ref, "name")
			}
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("Decide(%s) changed more than the image and user data: %s", raw, d.ProviderSpec)
		}
		if _, managed := protocol.PoolOfManagedUserDataSecret(d.UserDataSecret); d.UserDataSecret != "" && !managed {
			t.Fatalf("Decide(%s) points at user data %q, not a managed Secret", raw, d.UserDataSecret)
		}
		ms.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: d.ProviderSpec}
		d2, err := Decide(ms, st, settings)
		if err != nil || d2.Skip != nil || d2.ProviderSpec != nil {
			t.Fatalf("Decide is not idempotent on %s: then %+v, %v", raw, d2, err)
		}
	})
}

// FuzzStreamSelection parses any coreos-bootimages stream and updates each platform's spec from
// it (checkUpdate says what must hold): whatever a malformed or hostile stream says, an update
// writes a non-empty image the stream lists, touches nothing else, and is stable.
//
// Seeds: the f.Add ones and testdata/fuzz/FuzzStreamSelection (the 4.16 stream and cut-down
// variants of it).
func FuzzStreamSelection(f *testing.F) {
	data, err := os.ReadFile("testdata/stream-4.16.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data), uint8(0), uint8(0))
	f.Add(`{"stream":"s","architectures":{"x86_64":{"images":{"aws":{"regions":{"us-east-1":{"release":"1","image":"ami-1"}}},"gcp":{"project":"p","name":"n"}}}}}`, uint8(0), uint8(0))
	f.Add(`{"architectures":{"x86_64":{"rhel-coreos-extensions":{"marketplace":{"azure":{"no-purchase-plan":{"hyperVGen1":{"publisher":"azureopenshift","offer":"aro4","sku":"aro_5","version":"5"}}}}}}}}`, uint8(2), uint8(0))
	f.Add(`{"architectures":{}}`, uint8(0), uint8(0))
	f.Add(`{"architectures":{"x86_64":{}}}`, uint8(1), uint8(0))
	specs := []string{awsSpec, gcpSpec, azureSpec,
		with(azureSpec, `"sku":"aro_413"`, `"sku":"413-v2"`),
		with(azureSpec, `"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413"`, `"offer":"rh-oke-worker","publisher":"redhat","resourceID":"","sku":"rh-oke-worker-gen1"`),
		with(awsSpec, `"region":"us-east-1"`, `"region":"eu-west-1"`),
	}
	f.Fuzz(func(t *testing.T, data string, specIndex, archIndex uint8) {
		st, err := ParseStream(data)
		if err != nil {
			if st != nil {
				t.Fatalf("ParseStream(%q) returned a stream with error %v", data, err)
			}
			return
		}
		if len(st.Architectures) == 0 {
			t.Fatalf("ParseStream(%q) accepted a stream without architectures", data)
		}
		// The stream's own architectures first (sorted, so an index means the same every run),
		// then the ones it lacks.
		var arches []string
		for a := range st.Architectures {
			arches = append(arches, a)
		}
		slices.Sort(arches)
		for _, a := range fuzzArchitectures {
			if _, ok := st.Architectures[a]; !ok {
				arches = append(arches, a)
			}
		}
		checkUpdate(t, []byte(specs[int(specIndex)%len(specs)]), st, arches[int(archIndex)%len(arches)])
	})
}
