package ignition

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/vincent-petithory/dataurl"
)

// MaxInlineDecompressed bounds what one gzip-compressed inline source may decompress to where
// a component reads it (the agent applying it, the server templating it): a MachineConfig is at
// most MaxConfigSize, but a small compressed bomb inside one could otherwise exhaust memory.
const MaxInlineDecompressed = 64 << 20

// ErrNotInline is returned for a source that is not a data: URL (the machine fetches those
// itself; mco's components never do).
var ErrNotInline = errors.New("not an inline data: URL")

// Inline is a decoded inline source.
type Inline struct {
	Data []byte
	// Base64 and Gzipped say how the source was written, for whoever re-encodes it.
	Base64  bool
	Gzipped bool
}

// DecodeInline decodes an Ignition resource's source as Ignition would: a data: URL, gunzipped
// when compression is "gzip". What it decompresses to is refused beyond limit bytes.
func DecodeInline(source string, compression *string, limit int) (Inline, error) {
	if !strings.HasPrefix(source, "data:") {
		return Inline{}, ErrNotInline
	}
	u, err := dataurl.DecodeString(source)
	if err != nil {
		return Inline{}, fmt.Errorf("bad data URL: %w", err)
	}
	in := Inline{Data: u.Data, Base64: u.Encoding == dataurl.EncodingBase64}
	if compression == nil || *compression == "" {
		return in, nil
	}
	if *compression != "gzip" {
		return Inline{}, fmt.Errorf("unsupported compression %q", *compression)
	}
	zr, err := gzip.NewReader(bytes.NewReader(u.Data))
	if err != nil {
		return Inline{}, fmt.Errorf("gzip: %w", err)
	}
	defer zr.Close()
	data, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return Inline{}, fmt.Errorf("gzip: %w", err)
	}
	if len(data) > limit {
		return Inline{}, fmt.Errorf("gzip: decompresses to more than %d bytes", limit)
	}
	in.Data, in.Gzipped = data, true
	return in, nil
}
