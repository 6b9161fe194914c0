package server

import (
	"fmt"
	"math"
	"os"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		flag      string
		maxConns  int
		cluster   bool
		env       string
		want      int64
		wantApply bool
		wantErr   bool
	}{
		{flag: "auto", maxConns: 1000, want: 16<<20 + 1000*40<<10, wantApply: true},
		{flag: "auto", maxConns: 0, want: DefaultMemoryLimit(DefaultMaxConnections), wantApply: true},
		{flag: "auto", maxConns: 100, want: 16<<20 + 100*40<<10, wantApply: true},
		{flag: "auto", maxConns: 1000, env: "200MiB"},
		{flag: "auto", maxConns: 1000, cluster: true},
		{flag: "64Mi", maxConns: 1000, env: "200MiB", want: 64 << 20, wantApply: true},
		{flag: "64Mi", maxConns: 1000, cluster: true, want: 64 << 20, wantApply: true},
		{flag: "none", want: math.MaxInt64, wantApply: true},
		{flag: "0", wantErr: true},
		{flag: "-5Mi", wantErr: true},
		{flag: "lots", wantErr: true},
	} {
		t.Run(fmt.Sprintf("%s/cluster=%v/%s", tc.flag, tc.cluster, tc.env), func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", tc.env) // restored after the test
			if tc.env == "" {
				_ = os.Unsetenv("GOMEMLIMIT")
			}
			got, apply, err := MemoryLimit(tc.flag, tc.maxConns, tc.cluster)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want || apply != tc.wantApply {
				t.Errorf("MemoryLimit(%q, %d) = %d, %v; want %d, %v", tc.flag, tc.maxConns, got, apply, tc.want, tc.wantApply)
			}
		})
	}
}
