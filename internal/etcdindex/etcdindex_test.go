package etcdindex

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
)

func TestParseIndex(t *testing.T) {
	tests := []struct {
		raw     string
		want    int
		wantErr string
	}{
		{"0", 0, ""},
		{"1", 1, ""},
		{"007", 7, ""},
		{"2147483647", MaxIndex, ""},
		{"2147483648", 0, `etcd_index "2147483648" is larger than 2147483647`},
		{"99999999999999999999999", 0, "is larger than"},
		{"", 0, "etcd_index is empty; it must be a non-negative integer"},
		{"-1", 0, `etcd_index "-1" is negative; it must be a non-negative integer`},
		{"-", 0, `etcd_index "-" is not a non-negative integer`},
		{"abc", 0, `etcd_index "abc" is not a non-negative integer`},
		{"1.5", 0, "is not a non-negative integer"},
		{"+1", 0, "is not a non-negative integer"},
		{" 1", 0, "is not a non-negative integer"},
		{"1\n", 0, "is not a non-negative integer"},
		{"0x1", 0, "is not a non-negative integer"},
		{"1e3", 0, "is not a non-negative integer"},
		{"1_000", 0, "is not a non-negative integer"},
		{"١", 0, "is not a non-negative integer"}, // an Arabic-Indic digit one
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := ParseIndex(tc.raw)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseIndex(%q) = %d, %v; want an error containing %q", tc.raw, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseIndex(%q) = %d, %v; want %d", tc.raw, got, err, tc.want)
			}
		})
	}
}

// TestApply: each row is one config; want maps each content (named as Error names it) to what
// it must read after Apply with index 2, and wantErr lists what the error must say.
func TestApply(t *testing.T) {
	etcdUnit := "[Service]\nExecStart=/usr/bin/etcd --name=etcd-{{.etcd_index}} --initial-cluster-state={{if eq .etcd_index 0}}new{{else}}existing{{end}}\n"
	tests := []struct {
		name    string
		cfg     ignition.Config
		want    map[string]string
		wantErr []string
	}{
		{
			name: "unit, dropin and files in every data: encoding",
			cfg: config(
				[]types.File{
					file("/etc/plain", plainSource("member=etcd-{{.etcd_index}}\n")),
					file("/etc/base64", base64Source("member=etcd-{{.etcd_index}}\n")),
					gzipFile("/etc/gzip", "member=etcd-{{.etcd_index}}\n"),
					file("/etc/lower-case-escapes", "data:,member=etcd-%7b%7b.etcd_index%7d%7d"),
				},
				[]types.Unit{
					{Name: "etcd.service", Contents: ptr.To(etcdUnit),
						Dropins: []types.Dropin{{Name: "10-index.conf", Contents: ptr.To("[Service]\nEnvironment=INDEX={{.etcd_index}}\n")}}},
				}),
			want: map[string]string{
				`file "/etc/plain"`:                             "member=etcd-2\n",
				`file "/etc/base64"`:                            "member=etcd-2\n",
				`file "/etc/gzip"`:                              "member=etcd-2\n",
				`file "/etc/lower-case-escapes"`:                "member=etcd-2",
				`unit "etcd.service"`:                           "[Service]\nExecStart=/usr/bin/etcd --name=etcd-2 --initial-cluster-state=existing\n",
				`dropin "10-index.conf" of unit "etcd.service"`: "[Service]\nEnvironment=INDEX=2\n",
			},
		},
		{
			name: "variables, with, comments, trim markers, print and escaped braces",
			cfg: config(nil, []types.Unit{{Name: "a.service", Contents: ptr.To(
				`{{- /* member */ -}}{{$i := .etcd_index}}{{with .etcd_index}}n={{$i}}{{end}} {{print "x" .etcd_index}} {{"{{"}}.Id}}`)}}),
			want: map[string]string{`unit "a.service"`: "n=2 x2 {{.Id}}"},
		},
		{
			name: "with over the data keeps its fields",
			cfg: config(nil, []types.Unit{{Name: "a.service", Contents: ptr.To(
				`{{with .}}{{.etcd_index}}{{end}} {{with $}}{{with .}}{{.etcd_index}}{{end}}{{end}} {{with .etcd_index}}{{.}}{{end}}`)}}),
			want: map[string]string{`unit "a.service"`: "2 2 2"},
		},
		{
			name: "appends are templated too",
			cfg: config([]types.File{{Node: types.Node{Path: "/etc/appended"}, FileEmbedded1: types.FileEmbedded1{
				Append: []types.Resource{{Source: ptr.To(plainSource("static\n"))}, {Source: ptr.To(plainSource("idx={{.etcd_index}}\n"))}},
			}}}, nil),
			want: map[string]string{`file "/etc/appended" append 1`: "idx=2\n", `file "/etc/appended" append 0`: "static\n"},
		},
		{
			name: "remote sources are left to the machine",
			cfg:  config([]types.File{file("/etc/remote", "https://example.com/{{.etcd_index}}/conf")}, nil),
			want: map[string]string{},
		},
		{
			name: "a hash pins the bytes a template would change",
			cfg: config([]types.File{{Node: types.Node{Path: "/etc/pinned"}, FileEmbedded1: types.FileEmbedded1{
				Contents: types.Resource{Source: ptr.To(plainSource("etcd-{{.etcd_index}}")), Verification: types.Verification{Hash: ptr.To("sha512-00")}},
			}}}, nil),
			wantErr: []string{`file "/etc/pinned": refers to etcd_index and has contents.verification.hash`},
		},
		{
			name: "a hash on content that does not refer to the index is kept",
			cfg: config([]types.File{{Node: types.Node{Path: "/etc/pinned"}, FileEmbedded1: types.FileEmbedded1{
				Contents: types.Resource{Source: ptr.To(plainSource("{{.DNSUpstreams}}")), Verification: types.Verification{Hash: ptr.To("sha512-00")}},
			}}}, nil),
			want: map[string]string{},
		},
		{
			// OpenShift's on-prem Corefile.tmpl is a template for the coredns static pod: it does
			// not refer to the index, so it is nobody's business here (served as OpenShift serves it).
			name: "templates for other programs, foreign braces and stray ones are left as they are",
			cfg: config([]types.File{
				file("/etc/kubernetes/static-pod-resources/coredns/Corefile.tmpl", plainSource("forward . {{- range $upstream := .DNSUpstreams}} {{$upstream}}{{- end}}\n")),
				file("/etc/helm/values.yaml", plainSource("image: {{ .Values.image | quote }}\n")),
				file("/etc/jinja.j2", plainSource("{% for h in hosts %}{{ h.name }}{% endfor %}")),
				file("/etc/stray", plainSource("a {{ b")),
				file("/etc/escaped-only", plainSource(`{{"{{"}}.Id}}`)),
				file("/etc/typo", plainSource("etcd-{{.etcd_idx}}")),
				file("/etc/comment", plainSource("{{/* .etcd_index */}} {{.Other}}")),
				file("/etc/outside-actions", plainSource("etcd_index .etcd_index {{.Other}}")),
			}, []types.Unit{{Name: "podman.service", Contents: ptr.To("ExecStart=podman inspect --format '{{.Id}}' etcd\n"),
				Dropins: []types.Dropin{{Name: "10-x.conf", Contents: ptr.To("{{range 1000000000}}x{{end}}{{printf \"%999999999d\" 1}}")}}}}),
			want: map[string]string{},
		},
		{
			name: "content that refers to the index and to anything else is refused, in every branch",
			cfg: config([]types.File{
				file("/etc/mixed", plainSource("id={{.etcd_index}}\n{{range $u := .DNSUpstreams}}{{$u}}{{end}}\n")),
				file("/etc/other", plainSource("id={{.etcd_index}} {{.DNSUpstreams}}")),
				file("/etc/untaken", plainSource("{{if eq .etcd_index 0}}new{{else}}{{.etcd_idx}}{{end}}")),
				file("/etc/root", plainSource("{{$.etcd_index}} {{$.Cluster}}")),
				file("/etc/field-of-index", plainSource("{{.etcd_index.Name}}")),
				file("/etc/with", plainSource("{{with .etcd_index}}{{.etcd_index}}{{end}}")),
				file("/etc/with-in-with", plainSource("{{with .etcd_index}}{{with .}}{{.etcd_index}}{{end}}{{end}}")),
			}, nil),
			wantErr: []string{
				`file "/etc/mixed": template: /etc/mixed:2:8: range is not allowed`,
				`file "/etc/other": template: /etc/other:1:21: .DNSUpstreams is not etcd_index, the only variable: a content that refers to etcd_index is executed as a template whole, so write its other braces as {{"{{"}}`,
				`file "/etc/untaken": template: /etc/untaken:1:36: .etcd_idx is not etcd_index`,
				`file "/etc/root": template: /etc/root:1:20: $.Cluster is not etcd_index`,
				`file "/etc/field-of-index": template: /etc/field-of-index:1:13: .etcd_index.Name: etcd_index is a number, it has no field Name`,
				`file "/etc/with": template: /etc/with:1:22: .etcd_index is a field of dot inside with`,
				`file "/etc/with-in-with": template: /etc/with-in-with:1:32: .etcd_index is a field of dot inside with`,
			},
		},
		{
			name: "loops, definitions and unbounded functions are refused",
			cfg: config(nil, []types.Unit{
				{Name: "range.service", Contents: ptr.To("{{.etcd_index}}{{range 1000000000}}x{{end}}")},
				{Name: "define.service", Contents: ptr.To(`{{define "a"}}{{template "a" .}}{{end}}{{template "a" .}}{{.etcd_index}}`)},
				{Name: "block.service", Contents: ptr.To(`{{block "b" .}}{{.etcd_index}}{{end}}`)},
				{Name: "printf.service", Contents: ptr.To(`{{printf "%999999999d" .etcd_index}}`)},
				{Name: "nested.service", Contents: ptr.To(`{{if eq (len "abc") .etcd_index}}x{{end}}`)},
			}),
			wantErr: []string{
				`unit "range.service": template: range.service:1:23: range is not allowed: {{range 1000000000}}x{{end}}`,
				`unit "define.service": template: define and block are not allowed (defines "a")`,
				`unit "block.service": template: define and block are not allowed (defines "b")`,
				`unit "printf.service": template: printf.service:1:2: function printf is not allowed`,
				`unit "nested.service": template: nested.service:1:9: function len is not allowed`,
			},
		},
		{
			name:    "a syntax error names the content",
			cfg:     config(nil, []types.Unit{{Name: "broken.service", Dropins: []types.Dropin{{Name: "10-x.conf", Contents: ptr.To("{{.etcd_index")}}}}),
			wantErr: []string{`dropin "10-x.conf" of unit "broken.service": template: 10-x.conf:1: unclosed action`},
		},
		{
			name:    "an unknown compression is named",
			cfg:     config([]types.File{{Node: types.Node{Path: "/etc/xz"}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: ptr.To(plainSource("x")), Compression: ptr.To("xz")}}}}, nil),
			wantErr: []string{`file "/etc/xz": unsupported compression "xz"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, tc.cfg)
			got, err := Apply(tc.cfg, 2)
			if after := snapshot(t, tc.cfg); after != before {
				t.Fatalf("Apply modified its input:\nbefore %s\nafter  %s", before, after)
			}
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; want %q", tc.wantErr)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error does not contain %q:\n%v", want, err)
					}
				}
				var one *Error
				if !errors.As(err, &one) || one.Content == "" {
					t.Errorf("error is no *Error naming its content: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			contents := contentsOf(t, got)
			for name, want := range tc.want {
				if contents[name] != want {
					t.Errorf("%s = %q, want %q", name, contents[name], want)
				}
			}
			// Everything not listed must be exactly as it was.
			original := contentsOf(t, tc.cfg)
			for name, was := range original {
				if _, listed := tc.want[name]; !listed && contents[name] != was {
					t.Errorf("%s changed from %q to %q", name, was, contents[name])
				}
			}
		})
	}
}

// TestApplyWithoutActionsIsByteIdentical: contents without "{{" keep their exact sources, even
// in encodings Apply would never write itself, and the config comes back deeply equal.
func TestApplyWithoutActionsIsByteIdentical(t *testing.T) {
	cfg := config(
		[]types.File{
			file("/etc/mediatype", "data:text/plain;charset=utf-8,hello%20world"),
			file("/etc/base64", "data:text/plain;base64,aGVsbG8gd29ybGQ="),
			file("/etc/single-brace", plainSource("{not a template} }} {")),
			gzipFile("/etc/gzip", "no actions here\n"),
			{Node: types.Node{Path: "/etc/empty"}},
		},
		[]types.Unit{
			{Name: "plain.service", Contents: ptr.To("[Service]\nExecStart=/bin/true\n")},
			{Name: "masked.service", Mask: ptr.To(true)},
			{Name: "dropin-only.service", Dropins: []types.Dropin{{Name: "10-a.conf", Contents: ptr.To("[Service]\n")}, {Name: "20-empty.conf"}}},
		})
	got, err := Apply(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cfg) {
		t.Fatalf("a config without templates changed:\n%s\n%s", snapshot(t, got), snapshot(t, cfg))
	}
}

func TestApplyListsAtMostTenFailures(t *testing.T) {
	var units []types.Unit
	for i := range 13 {
		units = append(units, types.Unit{Name: fmt.Sprintf("u%02d.service", i), Contents: ptr.To("{{.etcd_index}}{{.nope}}")})
	}
	_, err := Apply(config(nil, units), 0)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if n := strings.Count(msg, ".nope is not etcd_index"); n != 10 {
		t.Errorf("%d failures listed, want 10:\n%s", n, msg)
	}
	if !strings.Contains(msg, "and 3 more contents that cannot be templated") {
		t.Errorf("the rest is not counted:\n%s", msg)
	}
}

func config(files []types.File, units []types.Unit) ignition.Config {
	cfg := ignition.Empty()
	cfg.Storage.Files = files
	cfg.Systemd.Units = units
	return cfg
}

func file(path, source string) types.File {
	return types.File{Node: types.Node{Path: path}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: ptr.To(source)}}}
}

func gzipFile(path, content string) types.File {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(content))
	_ = zw.Close()
	f := file(path, "data:;base64,"+base64.StdEncoding.EncodeToString(buf.Bytes()))
	f.Contents.Compression = ptr.To("gzip")
	return f
}

func plainSource(content string) string { return "data:," + dataurl.Escape([]byte(content)) }

func base64Source(content string) string {
	return "data:;base64," + base64.StdEncoding.EncodeToString([]byte(content))
}

// contentsOf decodes every inline content of cfg, named as Error names contents.
func contentsOf(t *testing.T, cfg ignition.Config) map[string]string {
	t.Helper()
	out := map[string]string{}
	decode := func(r types.Resource) string {
		if r.Source == nil || !strings.HasPrefix(*r.Source, "data:") {
			return ptr.Deref(r.Source, "")
		}
		u, err := dataurl.DecodeString(*r.Source)
		if err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(r.Compression, "") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(u.Data))
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
		return string(u.Data)
	}
	for _, f := range cfg.Storage.Files {
		out[fmt.Sprintf("file %q", f.Path)] = decode(f.Contents)
		for i, a := range f.Append {
			out[fmt.Sprintf("file %q append %d", f.Path, i)] = decode(a)
		}
	}
	for _, u := range cfg.Systemd.Units {
		out[fmt.Sprintf("unit %q", u.Name)] = ptr.Deref(u.Contents, "")
		for _, d := range u.Dropins {
			out[fmt.Sprintf("dropin %q of unit %q", d.Name, u.Name)] = ptr.Deref(d.Contents, "")
		}
	}
	return out
}

func snapshot(t *testing.T, cfg ignition.Config) string {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestEnabled(t *testing.T) {
	const key = "machineconfiguration.openshift.io/etcd-index-templating"
	tests := []struct {
		pool        string
		annotations map[string]string
		want        bool
		wantErr     string
	}{
		{"master", nil, true, ""},
		{"master", map[string]string{key: "false"}, false, ""},
		{"master", map[string]string{key: "true"}, true, ""},
		{"worker", nil, false, ""},
		{"infra", map[string]string{"other": "true"}, false, ""},
		{"infra", map[string]string{key: "true"}, true, ""},
		{"infra", map[string]string{key: "false"}, false, ""},
		{"infra", map[string]string{key: "yes"}, false, `MachineConfigPool infra: annotation ` + key + `: "yes" is neither "true" nor "false"`},
		{"master", map[string]string{key: "True"}, false, `"True" is neither`},
		{"master", map[string]string{key: ""}, false, `"" is neither`},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s %v", tc.pool, tc.annotations), func(t *testing.T) {
			got, err := Enabled(tc.pool, tc.annotations)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Enabled = %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Enabled = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// BenchmarkApply is the templating share of a cache miss: the server benchmark's fixture shape
// (50 files of 1-4 KB, 12 units), ten files and ten units templated.
func BenchmarkApply(b *testing.B) {
	var files []types.File
	var units []types.Unit
	for i := range 50 {
		content := strings.Repeat(fmt.Sprintf("key%d = value %d\n", i, i), 150)
		if i < 10 {
			content += "member = etcd-{{.etcd_index}}\n"
		}
		files = append(files, file(fmt.Sprintf("/etc/bench/%02d.conf", i), plainSource(content)))
	}
	for i := range 12 {
		contents := fmt.Sprintf("[Service]\nExecStart=/usr/bin/true %d\n", i)
		if i < 10 {
			contents += "Environment=ETCD_NAME=etcd-{{.etcd_index}}\n"
		}
		units = append(units, types.Unit{Name: fmt.Sprintf("bench-%02d.service", i), Contents: ptr.To(contents)})
	}
	cfg := config(files, units)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Apply(cfg, 1); err != nil {
			b.Fatal(err)
		}
	}
}
