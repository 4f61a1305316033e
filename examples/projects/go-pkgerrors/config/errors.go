package config

import "github.com/pkg/errors"

// ErrSyntax is returned (wrapped with the line number) for lines without "=".
var ErrSyntax = errors.New("syntax error")

// IsMissing reports whether err was caused by a key that is not set.
func IsMissing(err error) bool {
	return errors.Cause(err) == ErrMissingKey
}

// IsSyntax reports whether err was caused by a malformed line.
func IsSyntax(err error) bool {
	return errors.Cause(err) == ErrSyntax
}
