// Package diagnose builds `mco diagnose`'s bundle: a tar.gz of everything needed to tell from
// afar why a rollout is stuck. Collect reads the cluster's mco objects and relevant events
// through the API (never Secrets), asks a LogSource for the controller's and server's logs and
// each node's agent journal (the dev cluster's files and machines, or a cluster's pods), and
// writes a summary page. RedactMachineConfig hides the contents of files at secret-looking
// paths behind their sha256. A part that cannot be collected is written to errors.txt instead
// of failing the bundle: a bundle is most needed when something is broken.
package diagnose
