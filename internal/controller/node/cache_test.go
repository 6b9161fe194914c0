package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeCacheKeepsWhatControllersRead(t *testing.T) {
	kept := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "worker-0", ResourceVersion: "7",
			Labels:      map[string]string{"node-role.kubernetes.io/worker": ""},
			Annotations: map[string]string{"machineconfiguration.openshift.io/currentConfig": "rendered-worker-1"},
		},
		Spec: corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{{Key: "UpdateInProgress", Effect: corev1.TaintEffectPreferNoSchedule}}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			NodeInfo:   corev1.NodeSystemInfo{ContainerRuntimeVersion: "containerd://2.1.4", KubeletVersion: "v1.36.3"},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.2"}},
		},
	}
	full := kept.DeepCopy()
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
	full.Status.Images = []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 320000}}
	full.Status.VolumesInUse = []corev1.UniqueVolumeName{"kubernetes.io/csi/x"}
	full.Status.VolumesAttached = []corev1.AttachedVolume{{Name: "kubernetes.io/csi/x", DevicePath: "/dev/sdb"}}

	_, by := NodeCache()
	got, err := by.Transform(full)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, &kept) {
		t.Fatalf("stripped node:\n%+v\nwant\n%+v", got, &kept)
	}
	other := &corev1.Pod{}
	if got, _ := by.Transform(other); got != other {
		t.Fatalf("a non-Node was changed: %v", got)
	}
}
