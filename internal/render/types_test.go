package render

import "github.com/coreos/ignition/v2/config/v3_5/types"

type (
	ignitionFile = types.File
	ignitionUnit = types.Unit
)
