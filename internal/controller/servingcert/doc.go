// Package servingcert is the controller keeping the Machine Config Server's serving
// certificate when the admin supplies none: Secret machine-config-server-ca-key (the CA, read
// by this controller only), Secret machine-config-server-tls (what the server mounts) and
// ConfigMap machine-config-server-ca (the bundle the user-data controller puts in pointer
// configs), all in the server namespace and labelled as mco's. It reads them, asks the pure
// core (internal/servingcert) what they must hold, writes in the order that never serves a
// certificate machines cannot trust (CA, then bundle, then serving Secret), and looks again
// when the core says a certificate falls due.
package servingcert
