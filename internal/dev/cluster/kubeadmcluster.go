package cluster

import (
	"crypto/rand"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	devnet "github.com/mco-dev/mco/internal/dev/network"
	"github.com/mco-dev/mco/internal/protocol"
)

// What `kubeadm init` sets up for nodes to join (its bootstrap-token phase and kubelet-config
// upload; names are kubeadm's constants): bootstrap tokens authenticate in nodeTokenGroup, which
// may create node client CSRs and have them approved; nodes may renew their own.
const (
	nodeTokenGroup      = "system:bootstrappers:kubeadm:default-node-token"
	kubeletConfigMap    = "kubelet-config"
	bootstrapTokenTTL   = 24 * time.Hour // kubeadm's default token TTL
	tokenAlphabet       = "abcdefghijklmnopqrstuvwxyz0123456789"
	excludeFromLBsLabel = "node.kubernetes.io/exclude-from-external-load-balancers"
)

// bootstrapToken is a kubeadm bootstrap token, <id>.<secret>.
type bootstrapToken struct{ ID, Secret string }

func (t bootstrapToken) String() string { return t.ID + "." + t.Secret }

// newBootstrapToken is a random token as `kubeadm token create` makes one: [a-z0-9]{6}.[a-z0-9]{16}.
func newBootstrapToken() (bootstrapToken, error) {
	random := func(n int) (string, error) {
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		for i := range b {
			b[i] = tokenAlphabet[int(b[i])%len(tokenAlphabet)]
		}
		return string(b), nil
	}
	id, err := random(6)
	if err != nil {
		return bootstrapToken{}, err
	}
	secret, err := random(16)
	return bootstrapToken{ID: id, Secret: secret}, err
}

// bootstrapTokenSecret is the Secret the API server's bootstrap token authenticator reads, as
// kubeadm writes it; kube-controller-manager's token cleaner deletes it once expired.
func bootstrapTokenSecret(t bootstrapToken, expires time.Time) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + t.ID},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"description":                    "mco dev: the token machines of the kubeadm layout join with",
			"token-id":                       t.ID,
			"token-secret":                   t.Secret,
			"expiration":                     expires.UTC().Format(time.RFC3339),
			"usage-bootstrap-authentication": "true",
			"usage-bootstrap-signing":        "true",
			"auth-extra-groups":              nodeTokenGroup,
		},
	}
}

// kubeadmClusterObjects are what `kubeadm init` leaves for joining nodes besides a token: the
// RBAC that lets a token's kubelet ask for its client certificate and have it approved (and
// nodes renew theirs), and the cluster's kubelet configuration, which `kubeadm join` writes to
// each node.
func kubeadmClusterObjects(network devnet.Layout) []client.Object {
	bind := func(name, role string, subject string) client.Object {
		return &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: subject}},
		}
	}
	return []client.Object{
		bind("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", nodeTokenGroup),
		bind("kubeadm:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", nodeTokenGroup),
		bind("kubeadm:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"),
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: kubeletConfigMap},
			Data:       map[string]string{"kubelet": kubeletConfigYAML("", "127.0.0.1", "", network.ClusterDNS())},
		},
	}
}

// nodeRoles are the labels and taints the installer gives machine name's Node once it
// registered (a kubelet may not set node-role.kubernetes.io labels on its own Node). OpenShift
// layout: master on masters (tainted NoSchedule), worker on every other machine. kubeadm layout:
// what `kubeadm init`'s mark-control-plane phase sets on a control-plane node (role
// control-plane, excluded from external load balancers, tainted NoSchedule), and nothing on a
// worker: kubeadm gives workers no role label.
func nodeRoles(layout Layout, name string) (map[string]string, []corev1.Taint) {
	master := poolOfMachine(name) == protocol.MasterPool
	switch {
	case layout == LayoutKubeadm && master:
		return map[string]string{protocol.ControlPlaneRoleLabel: "", excludeFromLBsLabel: ""},
			[]corev1.Taint{{Key: protocol.ControlPlaneRoleLabel, Effect: corev1.TaintEffectNoSchedule}}
	case layout == LayoutKubeadm:
		return nil, nil
	case master:
		return map[string]string{protocol.MasterRoleLabel: ""}, []corev1.Taint{{Key: protocol.MasterRoleLabel, Effect: corev1.TaintEffectNoSchedule}}
	default:
		return map[string]string{protocol.WorkerRoleLabel: ""}, nil
	}
}

// poolOfMachine is the pool a machine named <pool>-<n> was made for.
func poolOfMachine(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '-' {
			return name[:i]
		}
	}
	return name
}
