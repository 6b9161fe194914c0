// Package servertoken keeps one bearer token Secret per MachineConfigPool for the Machine
// Config Server: <pool>-mcs-token in the server's namespace, labelled as mco's own and owned by
// the pool. It creates the Secret with a random token, rotates the token before it gets old
// (the previous one keeps working for an overlap, with an explicit expiry), drops the previous
// one once expired, and deletes the Secret with its pool. The decisions are
// internal/servertoken's; this package only reads, calls them and writes. A token Secret
// without the managed label is the admin's and is never changed or deleted.
package servertoken
