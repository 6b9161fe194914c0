package changeplan

import "strings"

// secretPathMarks are the substrings (matched case-insensitively) of file paths whose contents
// a plan shows only as sha256 hashes, so plans can be pasted into tickets and CI logs. The rule
// errs towards hiding: a path is secret when it contains any of these.
var secretPathMarks = []string{
	"secret",   // pull-secret, *-secret.yaml, /etc/secrets/...
	"token",    // bootstrap and service-account tokens
	"key",      // private keys, keytabs, *.key
	"password", // password files
	"passwd",   // e.g. htpasswd
	"credential",
	".pem",
	"kubeconfig",                   // /etc/kubernetes/kubeconfig and others: they embed client keys
	"/var/lib/kubelet/config.json", // the kubelet's image pull secret
}

// IsSecretPath reports whether a file's contents are shown hashed rather than as a diff.
func IsSecretPath(path string) bool {
	p := strings.ToLower(path)
	for _, mark := range secretPathMarks {
		if strings.Contains(p, mark) {
			return true
		}
	}
	return false
}
