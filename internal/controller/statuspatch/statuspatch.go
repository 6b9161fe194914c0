// Package statuspatch is the patch controllers write a status with: a merge patch of what
// changed, under the optimistic lock, that also carries every status field the API type
// declares without omitempty. OpenShift's controllers write whole statuses, so those fields are
// always there; a merge patch alone leaves out a field whose value never changed from its zero
// (a pool's degradedMachineCount of 0), and the stored object then has no such field:
// `kubectl get mcp` shows an empty DEGRADEDMACHINECOUNT and `kubectl wait
// --for=jsonpath='{.status.degradedMachineCount}'=0` never returns.
package statuspatch

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MergeFrom is client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}) whose
// data always holds the object's required status fields (RequiredFields), at their values in
// the object patched. The lock makes those values the latest the writer read, so carrying an
// unchanged one never overwrites another writer's.
func MergeFrom(before client.Object) client.Patch {
	return patch{Patch: client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})}
}

type patch struct{ client.Patch }

func (p patch) Data(obj client.Object) ([]byte, error) {
	data, err := p.Patch.Data(obj)
	if err != nil {
		return nil, err
	}
	status := reflect.Indirect(reflect.ValueOf(obj)).FieldByName("Status")
	if !status.IsValid() || status.Kind() != reflect.Struct {
		return data, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("status patch: %w", err)
	}
	raw, err := json.Marshal(status.Interface())
	if err != nil {
		return nil, fmt.Errorf("status patch: %w", err)
	}
	var full map[string]any
	if err := json.Unmarshal(raw, &full); err != nil {
		return nil, fmt.Errorf("status patch: %w", err)
	}
	patched, _ := doc["status"].(map[string]any)
	if patched == nil {
		patched = map[string]any{}
	}
	for _, f := range RequiredFields(status.Type()) {
		if _, ok := patched[f.JSON]; ok {
			continue
		}
		v := full[f.JSON]
		if v == nil {
			// null in a merge patch removes the field; an empty list or object is what the
			// field holds when there is nothing in it.
			switch f.Kind {
			case reflect.Slice:
				v = []any{}
			case reflect.Map:
				v = map[string]any{}
			default:
				continue // a nil pointer: nothing to write
			}
		}
		patched[f.JSON] = v
	}
	doc["status"] = patched
	return json.Marshal(doc)
}

// Field is a required status field: its JSON name and its Go kind.
type Field struct {
	JSON string
	Kind reflect.Kind
}

// RequiredFields are t's fields whose JSON tag has neither omitempty nor omitzero, in
// declaration order: the fields a whole-object write always carries.
func RequiredFields(t reflect.Type) []Field {
	var out []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("json")
		if !ok || tag == "-" || !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") {
			continue
		}
		out = append(out, Field{JSON: name, Kind: sf.Type.Kind()})
	}
	return out
}
