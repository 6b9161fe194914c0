package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-semver/semver"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/ignition"
)

// PoolState is what a source knows about one pool.
type PoolState struct {
	// Served is what to build the config from; Served.Config is nil while the pool has nothing
	// to serve (then Err says why).
	Served ServedInput
	// Key changes whenever the bytes built from Served would: e.g. the rendered config's name
	// and resourceVersion plus a hash of the extras. Equal keys keep the cached bytes.
	Key string
	// Err, when Served.Config is nil, is the reason; NotFound selects 404 over 500.
	Err      error
	NotFound bool
	// Tokens are required to fetch this pool's config. Nil means none is configured: the pool
	// is refused unless the server runs with --allow-unauthenticated.
	Tokens *PoolTokens
	// EtcdIndex says whether ?etcd_index=N requests are templated (see EtcdIndexOf).
	EtcdIndex EtcdIndexPolicy
}

// EtcdIndexPolicy is a pool's etcd_index templating (etcdindex.Enabled). It is not part of
// Key: the templated and plain responses are cached apart, and the policy is read per request.
type EtcdIndexPolicy struct {
	Enabled bool
	// Err is a malformed annotation: requests with etcd_index get 500 until it is fixed,
	// requests without it are served as usual.
	Err error
}

// EtcdIndexOf is pool's policy.
func EtcdIndexOf(pool *mcfgv1.MachineConfigPool) EtcdIndexPolicy {
	enabled, err := etcdindex.Enabled(pool.Name, pool.Annotations)
	return EtcdIndexPolicy{Enabled: enabled, Err: err}
}

// Store is the set of pools being served. Reads are lock-free (one atomic load and a map
// lookup); sources replace the whole set when their inputs change.
type Store struct {
	writeMu      sync.Mutex
	pools        atomic.Pointer[map[string]*poolEntry]
	loaded       atomic.Bool
	tokenOverlap time.Duration
	now          func() time.Time
}

// NewStore returns an empty store. tokenOverlap is how long a previous token without an explicit
// expiry stays valid after the store first sees it.
func NewStore(tokenOverlap time.Duration) *Store {
	s := &Store{tokenOverlap: tokenOverlap, now: time.Now}
	s.pools.Store(&map[string]*poolEntry{})
	return s
}

// poolEntry is one pool's state plus the responses built from it so far.
type poolEntry struct {
	name   string
	state  PoolState
	builds *buildCache
}

// buildCache holds the response for each servable spec version, built on first request.
// sync.Once makes concurrent first requests wait for one build instead of each building.
type buildCache struct {
	slots []buildSlot // indexed like ignition.ServableVersions

	// templated holds etcd_index responses by (index, spec version), at most
	// maxTemplatedResponses (the oldest built is dropped first): a machine asks with its own
	// index, so a pool sees a handful, while a client cycling through indexes must not grow
	// the server without bound.
	templatedMu    sync.Mutex
	templated      map[templatedKey]*buildSlot
	templatedOrder []templatedKey
}

type templatedKey struct{ index, version int }

// maxTemplatedResponses bounds one rendered config's templated responses: five etcd members
// (etcd's usual maximum is seven) in three spec versions fit.
const maxTemplatedResponses = 16

func newBuildCache() *buildCache {
	return &buildCache{slots: make([]buildSlot, len(ignition.ServableVersions))}
}

type buildSlot struct {
	once sync.Once
	resp *response
	err  error
}

// response is a ready-to-write answer. Header values are built once, as the slices
// http.Header holds, so writing them allocates nothing; what a request still allocates is
// parsing its Accept header and the audit log line.
type response struct {
	body          []byte
	etag          string
	etagHeader    []string
	contentLength []string
	version       string
}

// Get returns the entry of pool, or nil.
func (s *Store) Get(pool string) *poolEntry {
	return (*s.pools.Load())[pool]
}

// Pools lists the served pool names (for logs and tests).
func (s *Store) Pools() []string {
	m := *s.pools.Load()
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	return names
}

// Replace makes pools the served set. Pools whose Key did not change keep their built
// responses; all others are rebuilt on their next request.
func (s *Store) Replace(pools map[string]PoolState) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	old := *s.pools.Load()
	next := make(map[string]*poolEntry, len(pools))
	for name, state := range pools {
		entry := &poolEntry{name: name, state: state, builds: newBuildCache()}
		if prev, ok := old[name]; ok {
			if prev.state.Key == state.Key && state.Key != "" {
				entry.builds = prev.builds
			}
			entry.state.Tokens = s.settleOverlap(state.Tokens, prev.state.Tokens)
		} else {
			entry.state.Tokens = s.settleOverlap(state.Tokens, nil)
		}
		next[name] = entry
	}
	s.pools.Store(&next)
	s.loaded.Store(true)
}

// Loaded reports whether a source has filled the store at least once; before that every pool
// would look unknown.
func (s *Store) Loaded() bool { return s.loaded.Load() }

// settleOverlap gives a previous token without an explicit expiry one: tokenOverlap after the
// store first saw it, remembered across replacements.
func (s *Store) settleOverlap(t, prev *PoolTokens) *PoolTokens {
	if t == nil || t.PreviousToken == "" || !t.PreviousExpires.IsZero() {
		return t
	}
	settled := *t
	if prev != nil && prev.PreviousToken == t.PreviousToken && !prev.PreviousExpires.IsZero() {
		settled.PreviousExpires = prev.PreviousExpires
	} else {
		settled.PreviousExpires = s.now().Add(s.tokenOverlap)
	}
	return &settled
}

// response returns the bytes for version, building them once.
func (e *poolEntry) response(version semver.Version) (*response, error) {
	i := slices.Index(ignition.ServableVersions, version)
	if i < 0 {
		return nil, fmt.Errorf("Ignition spec %s cannot be produced from a rendered config (no conversion path)", version)
	}
	slot := &e.builds.slots[i]
	slot.once.Do(func() {
		body, err := BuildServedConfig(e.state.Served, version)
		slot.resp, slot.err = newResponse(body, version, err)
	})
	return slot.resp, slot.err
}

// templatedResponse returns the bytes for version templated with etcd_index = index, building
// them once per (index, version) while they stay among the cached ones.
func (e *poolEntry) templatedResponse(version semver.Version, index int) (*response, error) {
	i := slices.Index(ignition.ServableVersions, version)
	if i < 0 {
		return nil, fmt.Errorf("Ignition spec %s cannot be produced from a rendered config (no conversion path)", version)
	}
	slot := e.builds.templatedSlot(templatedKey{index: index, version: i})
	slot.once.Do(func() {
		body, err := BuildTemplatedServedConfig(e.state.Served, version, index)
		slot.resp, slot.err = newResponse(body, version, err)
	})
	return slot.resp, slot.err
}

func (c *buildCache) templatedSlot(key templatedKey) *buildSlot {
	c.templatedMu.Lock()
	defer c.templatedMu.Unlock()
	if slot, ok := c.templated[key]; ok {
		return slot
	}
	if c.templated == nil {
		c.templated = make(map[templatedKey]*buildSlot)
	}
	if len(c.templatedOrder) == maxTemplatedResponses {
		delete(c.templated, c.templatedOrder[0])
		c.templatedOrder = slices.Delete(c.templatedOrder, 0, 1)
	}
	slot := &buildSlot{}
	c.templated[key] = slot
	c.templatedOrder = append(c.templatedOrder, key)
	return slot
}

// newResponse makes built bytes ready to write (see response).
func newResponse(body []byte, version semver.Version, err error) (*response, error) {
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	return &response{
		body:          body,
		etag:          etag,
		etagHeader:    []string{etag},
		contentLength: []string{strconv.Itoa(len(body))},
		version:       version.String(),
	}, nil
}
