package userdata

import (
	"encoding/base64"
	"fmt"
	"net"
	"strconv"

	"github.com/coreos/go-semver/semver"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// Pointer describes one pool's pointer config.
type Pointer struct {
	Pool string
	// ServerHost is host or host:port of the Machine Config Server; the port defaults to 22623.
	ServerHost string
	// CABundle is the PEM bundle the server's certificate chains to.
	CABundle []byte
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// SpecVersion of the generated config; 3.1.0 or newer, since headers need 3.1.
	SpecVersion semver.Version
}

// httpResponseHeadersTimeout bounds one slow response, so a stuck connection is retried. There
// is deliberately no total timeout: a machine that boots before the server is up must keep
// retrying rather than give up and need a manual reboot.
const httpResponseHeadersTimeout = 30

// MinSpecVersion is the oldest spec that can carry the bearer-token header.
var MinSpecVersion = ignition.V3_1

// ConfigURL is where a machine of pool fetches its config.
func ConfigURL(serverHost, pool string) string {
	return fmt.Sprintf("https://%s/config/%s", hostWithPort(serverHost), pool)
}

func hostWithPort(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(protocol.ServerPort))
}

// PointerConfig returns the pointer Ignition JSON for p. The result is parsed back with the
// Ignition library before it is returned, so an invalid config never reaches a Secret.
func PointerConfig(p Pointer) ([]byte, error) {
	if p.ServerHost == "" {
		return nil, fmt.Errorf("pool %s: no Machine Config Server host configured", p.Pool)
	}
	if len(p.CABundle) == 0 {
		return nil, fmt.Errorf("pool %s: no Machine Config Server CA bundle", p.Pool)
	}
	if p.SpecVersion.LessThan(MinSpecVersion) {
		return nil, fmt.Errorf("pointer config spec %s: need %s or newer to send the bearer token", p.SpecVersion, MinSpecVersion)
	}
	merge := types.Resource{Source: ptr.To(ConfigURL(p.ServerHost, p.Pool))}
	if p.Token != "" {
		merge.HTTPHeaders = types.HTTPHeaders{{Name: "Authorization", Value: ptr.To("Bearer " + p.Token)}}
	}
	cfg := ignition.Empty()
	cfg.Ignition.Config.Merge = []types.Resource{merge}
	cfg.Ignition.Security.TLS.CertificateAuthorities = []types.Resource{{Source: ptr.To(caDataURL(p.CABundle))}}
	cfg.Ignition.Timeouts.HTTPResponseHeaders = ptr.To(httpResponseHeadersTimeout)

	out, err := ignition.Convert(cfg, p.SpecVersion)
	if err != nil {
		return nil, fmt.Errorf("pool %s: %w", p.Pool, err)
	}
	if _, err := ignition.Parse(out); err != nil {
		return nil, fmt.Errorf("pool %s: generated pointer config is invalid: %w", p.Pool, err)
	}
	return out, nil
}

func caDataURL(bundle []byte) string {
	return "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(bundle)
}
