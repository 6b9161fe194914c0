package containerruntime

import "strings"

// FieldError is one problem with a ContainerRuntimeConfig's spec.
type FieldError struct {
	Field  string
	Reason string
}

// Error names the ContainerRuntimeConfig and every problem found, each by its field.
type Error struct {
	Object   string
	Problems []FieldError
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Reason
	}
	return "ContainerRuntimeConfig " + e.Object + ": " + strings.Join(parts, "; ")
}
