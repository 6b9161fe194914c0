package servingcert

import (
	"encoding/json"
	"fmt"
	"time"
)

// marshalPublished encodes fingerprint → RFC 3339 time (json sorts the keys, so equal maps
// give equal annotations).
func marshalPublished(times map[string]string) string {
	out, err := json.Marshal(times)
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return string(out)
}

func unmarshalPublished(raw string) (map[string]time.Time, error) {
	var strs map[string]string
	if err := json.Unmarshal([]byte(raw), &strs); err != nil {
		return nil, fmt.Errorf("not a JSON object of fingerprint to time: %w", err)
	}
	out := map[string]time.Time{}
	for fp, s := range strs {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, fmt.Errorf("CA %s: %w", fp, err)
		}
		out[fp] = t
	}
	return out, nil
}
