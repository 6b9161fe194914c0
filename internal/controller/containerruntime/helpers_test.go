package containerruntime

import (
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"k8s.io/utils/ptr"
)

func ignitionFile(path, source string, mode int) types.File {
	return types.File{
		Node:          types.Node{Path: path},
		FileEmbedded1: types.FileEmbedded1{Mode: ptr.To(mode), Contents: types.Resource{Source: ptr.To(source)}},
	}
}
