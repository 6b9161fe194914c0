package daemon

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// bootTime is when the kernel booted, in Unix seconds, from /proc/stat's btime (the same in
// every PID namespace). Exported as mcd_boot_time_seconds it counts reboots across agent
// processes: each reboot changes it, where a counter would die with the process it counts in.
func bootTime() (float64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseBootTime(data)
}

func parseBootTime(stat []byte) (float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(stat))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("/proc/stat: btime %q is not a Unix time", v)
			}
			return float64(n), nil
		}
	}
	return 0, fmt.Errorf("/proc/stat has no btime line")
}
