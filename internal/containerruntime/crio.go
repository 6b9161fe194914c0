package containerruntime

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/generatedmc"
)

// CRI-O drop-ins, one per field, so a field left unset keeps CRI-O's own default (an encoder
// writing one struct would write every unset field as its zero value).
const (
	LogLevelDropIn       = "/etc/crio/crio.conf.d/01-ctrcfg-logLevel"
	PidsLimitDropIn      = "/etc/crio/crio.conf.d/01-ctrcfg-pidsLimit"
	LogSizeMaxDropIn     = "/etc/crio/crio.conf.d/01-ctrcfg-logSizeMax"
	DefaultRuntimeDropIn = "/etc/crio/crio.conf.d/01-ctrcfg-defaultRuntime"
)

// Each drop-in is the [crio.runtime] table with one key. The omitempty tags matter: pidsLimit 0
// is written as an empty [crio.runtime] table, as OpenShift writes it.
type logLevelTOML struct {
	Crio struct {
		Runtime struct {
			LogLevel string `toml:"log_level,omitempty"`
		} `toml:"runtime"`
	} `toml:"crio"`
}

type pidsLimitTOML struct {
	Crio struct {
		Runtime struct {
			PidsLimit int64 `toml:"pids_limit,omitempty"`
		} `toml:"runtime"`
	} `toml:"crio"`
}

type logSizeMaxTOML struct {
	Crio struct {
		Runtime struct {
			LogSizeMax int64 `toml:"log_size_max,omitempty"`
		} `toml:"runtime"`
	} `toml:"crio"`
}

type defaultRuntimeTOML struct {
	Crio struct {
		Runtime struct {
			DefaultRuntime string `toml:"default_runtime,omitempty"`
		} `toml:"runtime"`
	} `toml:"crio"`
}

// crioDropIns returns the drop-ins c asks for, in OpenShift's order.
func crioDropIns(c *mcfgv1.ContainerRuntimeConfiguration) ([]generatedmc.File, error) {
	var files []generatedmc.File
	add := func(path string, v any) error {
		data, err := encodeTOML(v)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, generatedmc.File{Path: path, Data: data})
		return nil
	}
	if c.LogLevel != "" {
		var t logLevelTOML
		t.Crio.Runtime.LogLevel = c.LogLevel
		if err := add(LogLevelDropIn, t); err != nil {
			return nil, err
		}
	}
	if c.PidsLimit != nil {
		var t pidsLimitTOML
		t.Crio.Runtime.PidsLimit = *c.PidsLimit
		if err := add(PidsLimitDropIn, t); err != nil {
			return nil, err
		}
	}
	if c.LogSizeMax != nil && c.LogSizeMax.Value() != 0 {
		var t logSizeMaxTOML
		t.Crio.Runtime.LogSizeMax = c.LogSizeMax.Value()
		if err := add(LogSizeMaxDropIn, t); err != nil {
			return nil, err
		}
	}
	if c.DefaultRuntime != mcfgv1.ContainerRuntimeDefaultRuntimeEmpty {
		var t defaultRuntimeTOML
		t.Crio.Runtime.DefaultRuntime = string(c.DefaultRuntime)
		if err := add(DefaultRuntimeDropIn, t); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func encodeTOML(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
