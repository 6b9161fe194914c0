package image

// What the image's config says, shared with the Containerfile (config_test.go checks that both
// say the same).
const (
	// Repository is the name config/default refers to.
	Repository = "ghcr.io/mco-dev/mco"
	// Entrypoint is mco, built without the dev harness (tag nodev): the controller's Deployment
	// runs it, and an admin may run the CLI in a pod of its own; the agent's and the server's
	// DaemonSets run mco-node and mco-server as their commands instead.
	Entrypoint = "/usr/bin/mco"
	// User is distroless's "nonroot": the controller and server run as it (config/default sets
	// it too); the agent's pod overrides it with root, which editing the host requires.
	User = "65532:65532"
	// Path is Debian's default: the agent runs `systemctl` and `chroot` by name.
	Path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// Binaries are the files of the mco layer, at /usr/bin/<name>.
var Binaries = []string{"mco", "mco-node", "mco-server"}

// Release is the Debian release of the base layer, as the Containerfile's debian:trixie-slim.
const Release = "trixie"

// Wanted are the Debian packages the agent's pod needs (the lock holds them with everything they
// depend on): systemd for `systemctl --root`, coreutils for `chroot`, ca-certificates for the
// controller's and server's TLS clients. The Containerfile installs the same on Debian slim.
var Wanted = []string{"systemd", "coreutils", "ca-certificates"}

// Labels are the OCI annotations both builds set; version and commit come from the build.
func Labels(version, commit string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    "mco",
		"org.opencontainers.image.source":   "https://github.com/mco-dev/mco",
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": commit,
	}
}
