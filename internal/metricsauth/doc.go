// Package metricsauth is what every mco metrics endpoint off the node's loopback needs: HTTPS
// with a certificate reloaded when it is rotated, and a bearer token checked with the API
// server (a TokenReview, then a SubjectAccessReview for the request's non-resource URL and
// verb, as kube-rbac-proxy and controller-runtime's metrics filter do). Loopback endpoints stay
// plain HTTP without a credential: only the node's own processes reach them.
//
// The server and the agent serve their metrics with it; the controller serves through
// controller-runtime's metrics server with controller-runtime's own filter, and takes only
// Endpoint's rules and the certificate reloader from here. The package links only client-go's
// typed review clients, so the node's and the server's lean builds stay lean.
package metricsauth
