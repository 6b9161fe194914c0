package apply

// OSStageError is the OS backend failing to stage a transaction's OS changes (OS image,
// kernel arguments, kernel type, extensions), as opposed to a file or unit that could not be
// written: the agent counts these as pivot errors. Its message is the backend's.
type OSStageError struct{ Err error }

func (e *OSStageError) Error() string { return e.Err.Error() }
func (e *OSStageError) Unwrap() error { return e.Err }
