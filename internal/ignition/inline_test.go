package ignition

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

func gzipped(t *testing.T, data []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return "data:;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

func TestDecodeInline(t *testing.T) {
	big := bytes.Repeat([]byte("a"), 1000)
	cases := []struct {
		name        string
		source      string
		compression *string
		limit       int
		want        Inline
		wantErr     string
	}{
		{name: "plain", source: "data:,hello%0A", limit: 10, want: Inline{Data: []byte("hello\n")}},
		{name: "base64", source: "data:;base64,aGk=", limit: 10, want: Inline{Data: []byte("hi"), Base64: true}},
		{name: "empty compression is none", source: "data:,x", compression: ptr.To(""), limit: 10, want: Inline{Data: []byte("x")}},
		{name: "gzip", source: gzipped(t, []byte("zipped")), compression: ptr.To("gzip"), limit: 10, want: Inline{Data: []byte("zipped"), Base64: true, Gzipped: true}},
		{name: "gzip at the limit", source: gzipped(t, big), compression: ptr.To("gzip"), limit: 1000, want: Inline{Data: big, Base64: true, Gzipped: true}},
		{name: "gzip over the limit", source: gzipped(t, big), compression: ptr.To("gzip"), limit: 999, wantErr: "decompresses to more than 999 bytes"},
		{name: "not gzip", source: "data:,plain", compression: ptr.To("gzip"), limit: 10, wantErr: "gzip:"},
		{name: "unknown compression", source: "data:,x", compression: ptr.To("xz"), limit: 10, wantErr: `unsupported compression "xz"`},
		{name: "bad data URL", source: "data:;base64,%%%", limit: 10, wantErr: "bad data URL"},
		{name: "remote", source: "https://example.com/x", limit: 10, wantErr: ErrNotInline.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeInline(tc.source, tc.compression, tc.limit)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Data, tc.want.Data) || got.Base64 != tc.want.Base64 || got.Gzipped != tc.want.Gzipped {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := DecodeInline("ftp://x", nil, 1); !errors.Is(err, ErrNotInline) {
		t.Fatalf("remote source: %v", err)
	}
}
