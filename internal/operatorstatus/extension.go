package operatorstatus

import (
	"encoding/json"
	"maps"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// LastSyncErrorKey is the status.extension key of what keeps the operator from being done.
const LastSyncErrorKey = "lastSyncError"

// extension is status.extension: each pool's line and, when set, lastSyncError. When current
// holds the same content it is returned as it is: the API server may have written the JSON
// differently, and that must not count as a change.
func extension(current runtime.RawExtension, pools []mcfgv1.MachineConfigPool, lastSyncError string) runtime.RawExtension {
	want := map[string]string{}
	for i := range pools {
		want[pools[i].Name] = poolStatus(&pools[i])
	}
	if lastSyncError != "" {
		want[LastSyncErrorKey] = lastSyncError
	}
	var have map[string]string
	if json.Unmarshal(current.Raw, &have) == nil && have != nil && maps.Equal(have, want) {
		return current
	}
	raw, err := json.Marshal(want)
	if err != nil { // a map of strings always marshals
		panic(err)
	}
	return runtime.RawExtension{Raw: raw}
}
