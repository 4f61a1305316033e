// Package errors is a minimal local stand-in for github.com/pkg/errors, providing only
// the functions this repository uses. Messages follow the upstream "context: cause" form.
package errors

import "fmt"

type fundamental struct {
	msg string
}

func (f *fundamental) Error() string { return f.msg }

type withMessage struct {
	cause error
	msg   string
}

func (w *withMessage) Error() string { return w.msg + ": " + w.cause.Error() }

// Cause returns the error this one wraps, for callers that walk the chain themselves.
func (w *withMessage) Cause() error { return w.cause }

// Unwrap lets the standard library's errors.Is and errors.As see through the wrapper.
func (w *withMessage) Unwrap() error { return w.cause }

// New returns an error with the given message.
func New(message string) error {
	return &fundamental{msg: message}
}

// Errorf formats according to a format specifier and returns the result as an error.
func Errorf(format string, args ...interface{}) error {
	return &fundamental{msg: fmt.Sprintf(format, args...)}
}

// Wrap annotates err with message. It returns nil if err is nil.
func Wrap(err error, message string) error {
	if err == nil {
		return nil
	}
	return &withMessage{cause: err, msg: message}
}

// Wrapf annotates err with a formatted message. It returns nil if err is nil.
func Wrapf(err error, format string, args ...interface{}) error {
	if err == nil {
		return nil
	}
	return &withMessage{cause: err, msg: fmt.Sprintf(format, args...)}
}

// Cause returns the innermost error that does not itself report a cause.
func Cause(err error) error {
	type causer interface {
		Cause() error
	}
	for err != nil {
		c, ok := err.(causer)
		if !ok {
			break
		}
		err = c.Cause()
	}
	return err
}
