package generatedmc

import (
	// clarketm/json, as OpenShift's generators use: unlike encoding/json it leaves out empty
	// structs tagged omitempty (passwd, systemd, kernelArguments, ...), which is what makes the
	// bytes equal to OpenShift's.
	"github.com/clarketm/json"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"
	"k8s.io/utils/ptr"
)

// File is one file a generated MachineConfig writes. Nil Data means "not written": a generator
// lists every file it may write in a fixed order and leaves out the ones its input does not ask
// for, so the order never depends on the input.
type File struct {
	Path string
	Data []byte
}

// Ignition returns the spec 3.5 config writing files, in order, each overwriting, mode 0644,
// with a base64 data URL whose media type is sniffed from the contents: byte for byte what
// OpenShift's kubelet and container runtime config controllers write.
func Ignition(files []File) ([]byte, error) {
	cfg := types.Config{Ignition: types.Ignition{Version: types.MaxVersion.String()}}
	for _, f := range files {
		if f.Data == nil {
			continue
		}
		cfg.Storage.Files = append(cfg.Storage.Files, types.File{
			Node: types.Node{Path: f.Path, Overwrite: ptr.To(true)},
			FileEmbedded1: types.FileEmbedded1{
				Mode: ptr.To(0o644),
				Contents: types.Resource{
					Source: ptr.To(dataurl.EncodeBytes(f.Data)),
					// An explicit empty compression, as OpenShift writes it (a nil one would
					// leave the key out and change the bytes).
					Compression: ptr.To(""),
				},
			},
		})
	}
	return json.Marshal(cfg)
}
