package ignition

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/validate"
)

// TestFatalInValidationMatchesLibrary: on random configs, valid and invalid in every way the
// generator can reach (bad modes, URLs, hashes, unit contents, duplicated paths across files,
// directories and links, duplicated units, dropins, users, kernel arguments across shouldExist
// and shouldNotExist...), the fast walk's verdict is the library's. A fast walk more lenient
// than the library would let an invalid config through the fast path.
func TestFatalInValidationMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	valid, invalid := 0, 0
	for i := range 15_000 {
		g := configGen{rng: rng, fill: []float64{0.03, 0.08, 0.2, 0.5}[i%4]}
		var cfg Config
		g.value(reflect.ValueOf(&cfg).Elem(), "")
		want := validate.ValidateWithContext(cfg, nil).IsFatal()
		if got := fatalInValidation(&cfg); got != want {
			t.Fatalf("config %d: fast walk says fatal=%v, the library %v:\n%s", i, got, want, validate.ValidateWithContext(cfg, nil))
		}
		if want {
			invalid++
		} else {
			valid++
		}
	}
	t.Logf("%d valid, %d invalid", valid, invalid)
	// The comparison means something only if both verdicts are common.
	if valid < 2_000 || invalid < 2_000 {
		t.Fatalf("generator gave %d valid and %d invalid configs; want both over 2,000", valid, invalid)
	}
}

// configGen fills a config at random from small pools of values, so that keys collide often
// and values are as often right as wrong.
type configGen struct {
	rng  *rand.Rand
	fill float64 // chance that an optional field is set
}

var genStrings = []string{
	"", "/etc/a", "/etc/a", "/etc/a/b", "/etc/b", "a", "relative/x", "data:,x", "data:;base64,!!",
	"https://example.com/x", "s3://bucket/key", "gzip", "xz", "sha512-" + strings.Repeat("0", 128),
	"sha256-" + strings.Repeat("a", 64), "sha256-short", "a.service", "b.service", "a.conf",
	"[Unit]\nDescription=x\n", "[Unit\n", "root", "xfs", "ext4", "swap", "/dev/sda", "/dev/sdb",
	"core", "other", "3.5.0", "quiet", "nosmt", "luks", "tpm2", "raid1", "http://proxy:3128",
}

var genInts = []int{0, 420, 0o644, 0o755, 0o4755, 0o7777, -1, 1, 4096}

func (g *configGen) value(v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			g.value(v.Field(i), v.Type().Field(i).Name)
		}
	case reflect.Pointer:
		if g.rng.Float64() < g.fill {
			v.Set(reflect.New(v.Type().Elem()))
			g.value(v.Elem(), name)
		}
	case reflect.Slice:
		if g.rng.Float64() >= g.fill {
			return
		}
		n := 1 + g.rng.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			g.value(s.Index(i), name)
		}
		v.Set(s)
	case reflect.String:
		if name == "Version" {
			v.SetString("3.5.0")
			return
		}
		v.SetString(genStrings[g.rng.IntN(len(genStrings))])
	case reflect.Int:
		v.SetInt(int64(genInts[g.rng.IntN(len(genInts))]))
	case reflect.Bool:
		v.SetBool(g.rng.IntN(2) == 0)
	}
}
