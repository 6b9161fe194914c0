package render

import (
	"crypto/sha256"
	"sync"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/ignition"
)

// ParseCache remembers parsed Ignition configs by the SHA-256 of their raw bytes, so a
// long-running process (controller, server) re-parses only MachineConfigs whose config changed:
// parsing and validating is most of the cost of a render. Safe for concurrent use.
type ParseCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]parseResult
	limit   int
	// rendered holds parsed rendered configs (ParseRendered) apart from the MachineConfigs':
	// each is a whole pool's config, megabytes parsed, and is a pool's current target only until
	// the next render, so only a few are kept.
	rendered map[[sha256.Size]byte]parseResult
}

// renderedLimit is how many parsed rendered configs a ParseCache keeps: a pool's current target
// and the one it moves to, for a few pools. Past it they are forgotten and parsed again.
const renderedLimit = 8

type parseResult struct {
	cfg      ignition.Config
	warnings []ignition.Warning
	err      error
}

// NewParseCache returns a cache that forgets everything once it holds more than limit configs;
// a cluster's working set is a few hundred, so a reset is rare and only costs re-parsing.
func NewParseCache(limit int) *ParseCache {
	return &ParseCache{entries: map[[sha256.Size]byte]parseResult{}, limit: limit, rendered: map[[sha256.Size]byte]parseResult{}}
}

// ParseRendered is ignition.Parse served from the cache, for Options.ParseCurrent: the
// controller renders a pool twice per change (for the change, then again when its own write of
// the pool's target comes back), and the second render's new target is the first one's current
// config, so the first parses it and every later render reuses it.
func (c *ParseCache) ParseRendered(raw []byte) (ignition.Config, error) {
	key := sha256.Sum256(raw)
	c.mu.Lock()
	res, ok := c.rendered[key]
	c.mu.Unlock()
	if ok {
		return res.cfg, res.err
	}
	res.cfg, res.err = ignition.Parse(raw)
	c.mu.Lock()
	if len(c.rendered) >= renderedLimit {
		clear(c.rendered)
	}
	c.rendered[key] = res
	c.mu.Unlock()
	return res.cfg, res.err
}

// Parse is ValidateMachineConfig with the Ignition parse served from the cache. Cached configs
// are shared: callers must not modify them (Render does not).
func (c *ParseCache) Parse(mc *mcfgv1.MachineConfig) (ignition.Config, error) {
	cfg, _, err := c.ParseWithWarnings(mc)
	return cfg, err
}

// ParseWithWarnings is ValidateMachineConfigWithWarnings with the Ignition parse served from
// the cache, for Options.Parse.
func (c *ParseCache) ParseWithWarnings(mc *mcfgv1.MachineConfig) (ignition.Config, []Warning, error) {
	key := sha256.Sum256(mc.Spec.Config.Raw)
	c.mu.Lock()
	res, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		res.cfg, res.warnings, res.err = ignition.ParseWithWarnings(mc.Spec.Config.Raw)
		c.mu.Lock()
		if len(c.entries) >= c.limit {
			clear(c.entries)
		}
		c.entries[key] = res
		c.mu.Unlock()
	}
	cfg, err := validateParsed(mc, res.cfg, res.err)
	return cfg, configWarnings(mc.Name, res.warnings), err
}
