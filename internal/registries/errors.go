package registries

// Error is a refused input: the object, the field and why.
type Error struct {
	// Object is "<Kind> <name>", e.g. "ImageDigestMirrorSet digest-mirror".
	Object string
	Field  string
	Reason string
}

func (e *Error) Error() string { return e.Object + ": " + e.Field + ": " + e.Reason }
