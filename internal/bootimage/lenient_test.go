package bootimage

// Lenient reads of a decoded providerSpec, for tests that inspect documents the code under
// test produced (the package itself reads through doc, which checks every type).

// object returns m[key] when it is a JSON object, else nil.
func object(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// stringAt follows keys through nested objects to a string; "" when any step is missing.
func stringAt(m map[string]any, keys ...string) string {
	for _, k := range keys[:len(keys)-1] {
		if m = object(m, k); m == nil {
			return ""
		}
	}
	s, _ := m[keys[len(keys)-1]].(string)
	return s
}
