package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"sync"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/mco-dev/mco/internal/ignition"
)

// filesPerWorker is the least number of files worth a goroutine of their own when serialising.
const filesPerWorker = 512

// placeholderFile stands in for the file list while the rest of a config is serialised. Its
// path holds a NUL, which validation refuses in every MachineConfig, and serialises as \u0000,
// so its JSON cannot occur elsewhere in a config: inside a string a quote is escaped.
var placeholderFile = func() types.File {
	var f types.File
	f.Path = "\x00files"
	return f
}()

// marshalIgnition is json.Marshal(cfg), byte for byte, with the file list (nearly all of a
// rendered config) serialised in parts on all cores: encoding/json writes an array as its
// elements' JSON joined by commas, whatever else surrounds it.
func marshalIgnition(cfg ignition.Config) ([]byte, error) {
	files := cfg.Storage.Files
	workers := min(goruntime.GOMAXPROCS(0), len(files)/filesPerWorker)
	if workers < 2 {
		return json.Marshal(cfg)
	}
	cfg.Storage.Files = []types.File{placeholderFile}
	rest, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	placeholder, err := json.Marshal(placeholderFile)
	if err != nil {
		return nil, err
	}
	at := bytes.Index(rest, placeholder)
	if at < 0 {
		return nil, fmt.Errorf("serialising Ignition: no file list in %.80s", rest)
	}
	parts := make([][]byte, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			from, to := w*len(files)/workers, (w+1)*len(files)/workers
			parts[w], errs[w] = json.Marshal(files[from:to])
		})
	}
	wg.Wait()
	size := len(rest) - len(placeholder) + workers - 1 // the commas between parts
	for w, part := range parts {
		if errs[w] != nil {
			return nil, errs[w]
		}
		size += len(part) - 2 // without its brackets
	}
	out := make([]byte, 0, size)
	out = append(out, rest[:at]...)
	for w, part := range parts {
		if w > 0 {
			out = append(out, ',')
		}
		out = append(out, part[1:len(part)-1]...)
	}
	return append(out, rest[at+len(placeholder):]...), nil
}
