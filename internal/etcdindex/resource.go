package etcdindex

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"
	"k8s.io/utils/ptr"
)

// maxDecompressed bounds a gzip-compressed content's size once decompressed, so a small
// compressed bomb in a MachineConfig cannot exhaust the server's memory.
const maxDecompressed = 64 << 20

// templateResource executes an inline data: source as a template called name (text/template
// puts it into its own messages). It reports changed=false for
// everything it leaves alone: no source, a remote source (fetched by the machine, never seen
// here), content without "{{", content the template leaves as it was.
func templateResource(name string, r types.Resource, data map[string]any) (types.Resource, bool, error) {
	if r.Source == nil || !strings.HasPrefix(*r.Source, "data:") || cannotHoldBraces(*r.Source, r.Compression) {
		return r, false, nil
	}
	u, err := dataurl.DecodeString(*r.Source)
	if err != nil {
		return r, false, fmt.Errorf("bad data URL: %w", err)
	}
	gzipped := false
	if r.Compression != nil && *r.Compression != "" {
		if *r.Compression != "gzip" {
			return r, false, fmt.Errorf("unsupported compression %q", *r.Compression)
		}
		gzipped = true
	}
	content := u.Data
	if gzipped {
		if content, err = gunzip(u.Data); err != nil {
			return r, false, err
		}
	}
	if !bytes.Contains(content, []byte("{{")) {
		return r, false, nil
	}
	if r.Verification.Hash != nil {
		return r, false, errors.New("has template actions and contents.verification.hash: executing them would change the bytes the hash pins, so Ignition would refuse the file; drop the hash or the actions")
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
	case u.Encoding == dataurl.EncodingBase64:
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

func gunzip(compressed []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxDecompressed+1))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if len(out) > maxDecompressed {
		return nil, fmt.Errorf("gzip: more than %d MiB decompressed", maxDecompressed>>20)
	}
	return out, nil
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
