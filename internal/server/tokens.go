package server

import (
	"crypto/subtle"
	"fmt"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/protocol"
)

// PoolTokens are the bearer tokens that may fetch one pool's config. While a token is being
// rotated, the previous one stays valid until PreviousExpires, so machines booting from
// pointer configs written before the rotation still get their config.
type PoolTokens struct {
	Token         string `json:"token"`
	PreviousToken string `json:"previousToken,omitempty"`
	// PreviousExpires ends the overlap window. Zero means "the server's --token-overlap after
	// it first saw this previous token" (see Store.Replace).
	PreviousExpires time.Time `json:"previousTokenExpires,omitzero"`
}

// Refusal is why a config request was refused; the values are the audit log's and the
// mcs_config_requests_refused_total metric's reason.
type Refusal string

const (
	// RefusedNoToken: the pool has no token configured and --allow-unauthenticated is off.
	RefusedNoToken Refusal = "no-token-configured"
	// RefusedMissingAuthorization: the request has no Authorization header.
	RefusedMissingAuthorization Refusal = "missing-authorization"
	// RefusedInvalidToken: the header is not a bearer token the pool accepts now.
	RefusedInvalidToken Refusal = "invalid-token"
)

// authorize decides one config request for a pool with tokens (nil: none configured). A pool
// without tokens is served only when allowUnauthenticated; a pool with tokens always needs
// one, whatever allowUnauthenticated says. "" means serve.
func authorize(tokens *PoolTokens, allowUnauthenticated bool, authorization string, now time.Time) Refusal {
	switch {
	case tokens == nil && allowUnauthenticated:
		return ""
	case tokens == nil:
		return RefusedNoToken
	case authorization == "":
		return RefusedMissingAuthorization
	case !tokens.Allows(authorization, now):
		return RefusedInvalidToken
	}
	return ""
}

// Allows reports whether an Authorization header carries a currently valid token.
func (t *PoolTokens) Allows(authorization string, now time.Time) bool {
	scheme, presented, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	presented = strings.TrimSpace(presented)
	if presented == "" {
		return false
	}
	if tokenEqual(presented, t.Token) {
		return true
	}
	return t.PreviousToken != "" && now.Before(t.PreviousExpires) && tokenEqual(presented, t.PreviousToken)
}

// tokenEqual compares in constant time so response timing does not reveal a token prefix.
func tokenEqual(presented, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(presented), []byte(want)) == 1
}

// TokensFromSecretData reads a pool's token Secret (protocol.ServerTokenSecretName in the
// server's namespace, cluster mode; the standalone modes read the same fields from
// --tokens-file). ok is false when it holds no token.
func TokensFromSecretData(data map[string][]byte) (PoolTokens, bool, error) {
	t := PoolTokens{
		Token:         strings.TrimSpace(string(data[protocol.ServerTokenKey])),
		PreviousToken: strings.TrimSpace(string(data[protocol.PreviousTokenKey])),
	}
	if raw := strings.TrimSpace(string(data[protocol.PreviousTokenExpiresKey])); raw != "" {
		expires, err := time.Parse(time.RFC3339, raw)
		if err != nil {
			return PoolTokens{}, false, fmt.Errorf("%s: %w", protocol.PreviousTokenExpiresKey, err)
		}
		t.PreviousExpires = expires
	}
	return t, t.Token != "", nil
}

// LoadTokensFile reads --tokens-file: a YAML or JSON map from pool name to PoolTokens, e.g.
//
//	worker:
//	  token: 3f1c...
//	  previousToken: 9a0b...
//	  previousTokenExpires: "2026-09-01T12:00:00Z"
//
// An empty path means no pool has a token: the server then refuses every pool unless
// --allow-unauthenticated.
func LoadTokensFile(path string) (map[string]PoolTokens, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tokens map[string]PoolTokens
	if err := yaml.UnmarshalStrict(raw, &tokens); err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	for pool, t := range tokens {
		if strings.TrimSpace(t.Token) == "" {
			return nil, fmt.Errorf("tokens file %s: pool %q has no token", path, pool)
		}
	}
	return tokens, nil
}
