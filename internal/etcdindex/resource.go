package etcdindex

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
)

// templateResource executes an inline data: source as a template called name (text/template
// puts it into its own messages). It reports changed=false for
// everything it leaves alone: no source, a remote source (fetched by the machine, never seen
// here), content that does not refer to the index (RefersToIndex), content the template leaves
// as it was.
func templateResource(name string, r types.Resource, data map[string]any) (types.Resource, bool, error) {
	if r.Source == nil || !strings.HasPrefix(*r.Source, "data:") || cannotHoldBraces(*r.Source, r.Compression) {
		return r, false, nil
	}
	in, err := ignition.DecodeInline(*r.Source, r.Compression, ignition.MaxInlineDecompressed)
	if err != nil {
		return r, false, err
	}
	content, gzipped := in.Data, in.Gzipped
	if !bytes.Contains(content, []byte(Variable)) || !RefersToIndex(string(content)) {
		return r, false, nil
	}
	if r.Verification.Hash != nil {
		return r, false, errors.New("refers to etcd_index and has contents.verification.hash: executing it would change the bytes the hash pins, so Ignition would refuse the file; drop the hash or the reference")
	}
	out, err := execute(name, content, data)
	if err != nil {
		return r, false, err
	}
	if bytes.Equal(out, content) {
		return r, false, nil
	}
	var source string
	switch {
	case gzipped:
		compressed, err := gzipBytes(out)
		if err != nil {
			return r, false, err
		}
		source = "data:;base64," + base64.StdEncoding.EncodeToString(compressed)
	case in.Base64:
		source = "data:;base64," + base64.StdEncoding.EncodeToString(out)
	default:
		source = "data:," + dataurl.Escape(out)
	}
	r.Source = ptr.To(source)
	return r, true, nil
}

// cannotHoldBraces is true for a plain (not base64, not compressed) data URL without "{",
// "%7B" or "%7b": its decoded content cannot hold "{{", so decoding it (most of a config's
// cost here) can be skipped.
func cannotHoldBraces(source string, compression *string) bool {
	header, payload, ok := strings.Cut(source, ",")
	if !ok || strings.HasSuffix(strings.ToLower(header), ";base64") || (compression != nil && *compression != "") {
		return false
	}
	return !strings.Contains(payload, "{") && !strings.Contains(payload, "%7B") && !strings.Contains(payload, "%7b")
}

func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
