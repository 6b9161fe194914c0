package kubeletconfig

import "fmt"

// Error is a KubeletConfig that cannot be turned into a MachineConfig, naming the object, the
// field and the reason. Nothing is written for such a KubeletConfig.
type Error struct {
	KubeletConfig string
	Field         string
	Reason        string
}

func (e *Error) Error() string {
	return fmt.Sprintf("KubeletConfig %s: %s: %s", e.KubeletConfig, e.Field, e.Reason)
}

func fieldError(kc, field, format string, args ...any) *Error {
	return &Error{KubeletConfig: kc, Field: field, Reason: fmt.Sprintf(format, args...)}
}
