// Command render times `mco render` as an admin runs it: a whole process (start, read and decode
// every manifest, validate, merge, encode, write) on a pool of many MachineConfigs, run several
// times, reporting the minimum, median and maximum wall time and the peak RSS. make bench-render
// runs it on bin/mco; -bin times another build (OpenShift's, for one, driven the same way).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/mco", "the mco to time")
	configs := flag.Int("configs", 200, "MachineConfigs in the pool")
	files := flag.Int("files", 4000, "files across them (each MachineConfig also has a unit)")
	runs := flag.Int("runs", 15, "runs; the first warms the page cache and is not counted")
	keep := flag.String("dir", "", "write the manifests here and keep them (default: a temporary directory)")
	flag.Parse()

	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "mco-bench-render-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	n, err := writeManifests(dir, *configs, *files)
	if err != nil {
		log.Fatal(err)
	}
	var walls []time.Duration
	var peakRSS int64
	for i := 0; i <= *runs; i++ {
		cmd := exec.Command(*bin, "render", "--pool", "worker", dir)
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			log.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = devnull, os.Stderr
		start := time.Now()
		err = cmd.Run()
		wall := time.Since(start)
		devnull.Close()
		if err != nil {
			log.Fatalf("%s render: %v", *bin, err)
		}
		if i == 0 {
			continue
		}
		walls = append(walls, wall)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakRSS = max(peakRSS, ru.Maxrss)
		}
	}
	slices.Sort(walls)
	fmt.Printf("%s render: %d MachineConfigs, %d files + %d units, %d runs: min %v median %v max %v, peak RSS %d MiB\n",
		*bin, *configs, n, *configs, len(walls), walls[0].Round(time.Millisecond), walls[len(walls)/2].Round(time.Millisecond),
		walls[len(walls)-1].Round(time.Millisecond), peakRSS/1024)
}

// writeManifests writes configs MachineConfigs for the worker pool, files files among them, as
// YAML documents of the kind `kubectl get -o yaml` prints (Ignition as JSON in spec.config), and
// returns how many files it wrote.
func writeManifests(dir string, configs, files int) (int, error) {
	total := 0
	for i := range configs {
		per := files / configs
		if i < files%configs {
			per++
		}
		type file struct {
			Path     string `json:"path"`
			Mode     int    `json:"mode"`
			Contents struct {
				Source string `json:"source"`
			} `json:"contents"`
		}
		var fs []file
		for j := range per {
			f := file{Path: fmt.Sprintf("/etc/bench/%03d/file-%03d.conf", i, j), Mode: 0o644}
			f.Contents.Source = "data:," + url.PathEscape(fmt.Sprintf("# bench file %d of config %d\nkey=%d-%d\n", j, i, i, j))
			fs = append(fs, f)
		}
		ign := map[string]any{
			"ignition": map[string]any{"version": "3.5.0"},
			"storage":  map[string]any{"files": fs},
			"systemd": map[string]any{"units": []any{map[string]any{
				"name": fmt.Sprintf("bench-%03d.service", i), "enabled": true,
				"contents": "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
			}}},
		}
		raw, err := json.Marshal(ign)
		if err != nil {
			return 0, err
		}
		name := fmt.Sprintf("%02d-worker-bench-%03d", 50+i%50, i)
		doc := fmt.Sprintf("apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: %s\n  labels:\n    machineconfiguration.openshift.io/role: worker\nspec:\n  config: %s\n", name, raw)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(doc), 0o644); err != nil {
			return 0, err
		}
		total += per
	}
	return total, nil
}
