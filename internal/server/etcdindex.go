package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/mco-dev/mco/internal/etcdindex"
)

// errEtcdIndexPolicy marks a request the pool's malformed annotation fails (500, the admin's
// to fix), as opposed to a malformed parameter (400, the pointer config's).
var errEtcdIndexPolicy = errors.New("the pool's etcd_index templating is misconfigured")

// requestedEtcdIndex reads ?etcd_index=N for a pool whose policy templates. templated is false,
// and nothing is looked at, when the pool does not template or the request does not ask: such
// requests get the plain bytes. reason is why the request cannot be served: the parameter is
// malformed (not exactly one non-negative integer, see etcdindex.ParseIndex), or the pool's
// annotation is (wrapping errEtcdIndexPolicy).
func requestedEtcdIndex(u *url.URL, policy EtcdIndexPolicy) (index int, templated bool, reason error) {
	if u.RawQuery == "" || (!policy.Enabled && policy.Err == nil) {
		return 0, false, nil
	}
	query, err := url.ParseQuery(u.RawQuery)
	values, asked := query[etcdindex.Variable]
	switch {
	case !asked && err == nil:
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("query %q: %w", u.RawQuery, err)
	case len(values) != 1:
		return 0, false, fmt.Errorf("%s is given %d times; give it once", etcdindex.Variable, len(values))
	}
	index, err = etcdindex.ParseIndex(values[0])
	if err != nil {
		return 0, false, err
	}
	if policy.Err != nil {
		return 0, false, fmt.Errorf("%w: %w", errEtcdIndexPolicy, policy.Err)
	}
	return index, true, nil
}

// etcdIndexAttr is the log attribute of a templated request; the empty Attr, which handlers
// drop, otherwise.
func etcdIndexAttr(templated bool, index int) slog.Attr {
	if !templated {
		return slog.Attr{}
	}
	return slog.Int("etcdIndex", index)
}
